CREATE OR REPLACE TEMP MACRO json_int(i) AS coalesce(CAST(i AS VARCHAR), 'null')
