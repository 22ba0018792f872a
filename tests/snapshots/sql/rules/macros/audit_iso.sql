CREATE OR REPLACE TEMP MACRO audit_iso(ts) AS strftime(ts, '%Y-%m-%dT%H:%M:%S') || audit_offset(CAST(epoch(CAST(ts AS TIMESTAMP)) - epoch(ts) AS BIGINT))
