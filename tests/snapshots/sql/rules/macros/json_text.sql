CREATE OR REPLACE TEMP MACRO json_text(s) AS CASE WHEN s IS NULL THEN 'null' ELSE json_checked(to_json(s), s) END
