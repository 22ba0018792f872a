SELECT origin, result_key, any_value(kind) AS kind, any_value(task_id) AS task_id,
       any_value(message_id) AS message_id, bool_or(terminal) AS terminal,
       arg_max(state, (terminal, timestamp, source_path)) AS state, max(timestamp) AS timestamp,
       min(source_path) AS source_path, list_sort(list(source_path)) AS segments, list(copy_id) AS copy_ids
FROM results WHERE origin IS NOT NULL GROUP BY origin, result_key
