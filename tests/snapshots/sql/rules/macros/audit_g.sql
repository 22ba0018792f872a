CREATE OR REPLACE TEMP MACRO audit_g(x) AS printf('%g', x)
