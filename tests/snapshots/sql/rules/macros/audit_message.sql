CREATE OR REPLACE TEMP MACRO audit_message(message_id) AS 'agent message ' || coalesce(nullif(message_id, ''), '(no id)')
