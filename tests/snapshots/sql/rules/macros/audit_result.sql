CREATE OR REPLACE TEMP MACRO audit_result(kind, task_id, message_id) AS CASE WHEN kind = 'message' THEN 'message ' || coalesce(message_id, 'None') ELSE 'task ' || coalesce(task_id, 'None') END
