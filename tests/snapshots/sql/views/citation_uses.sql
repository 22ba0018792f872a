    SELECT * FROM (
        SELECT c.citation_hash, c.study, c.period, c.fielded, c.fielded_start, c.fielded_end,
               c.base_name, c.base_n, c.weight, c.source_table, c.source_column, c.source_function,
               c.warnings, c.valid, c.problems, c.inferred, c.part_id AS citation_part_id,
               r.copy_id, r.result_key, r.kind AS result_kind, r.task_id,
               coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
               r.agent, r.timestamp, r.source_path, r.source_sha256
        FROM citations c
        JOIN (
    SELECT x.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM (SELECT * FROM results r WHERE TRUE) x
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = x.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = x.source_dir) r ON r.copy_id = c.copy_id
        JOIN parts p ON p.part_id = c.part_id) u
    WHERE TRUE
