SELECT count(DISTINCT task_id) FROM results WHERE kind = 'task'
