CREATE OR REPLACE TEMP MACRO audit_quote(t) AS CASE WHEN t IS NULL THEN '(unnamed)' ELSE '"' || t || '"' END
