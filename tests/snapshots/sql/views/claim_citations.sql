SELECT value, literal, unit, stated, cell, pointer, part_index, content_hash, artifact_id, message_id, task_id, context_id, agent, timestamp, source_path, source_sha256, result_key, copy_id, part_id, copies, citation_hash, study, period, fielded, base_name, base_n, weight, source_table, source_column, source_function, warnings, valid, problems, inferred FROM claim_index WHERE result_key NOT IN (SELECT result_key FROM claim_index_pending)
UNION ALL
SELECT * FROM (
    WITH stored AS MATERIALIZED (
        SELECT c.copy_id, c.result_key, c.message_id, c.task_id, c.context_id, c.agent, c.timestamp, c.source_path,
               c.source_sha256, c.origin, count(*) OVER (PARTITION BY c.result_key) AS stored
        FROM (
    SELECT x.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM (SELECT * FROM results r WHERE r.claims > 0 AND result_key IN (SELECT result_key FROM claim_index_pending)) x
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = x.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = x.source_dir) c),
    cited AS MATERIALIZED (
    SELECT result_key, citation_hash, any_value(study) AS study, any_value(period) AS period, any_value(fielded) AS fielded, any_value(base_name) AS base_name, any_value(base_n) AS base_n, any_value(weight) AS weight, any_value(source_table) AS source_table, any_value(source_column) AS source_column, any_value(source_function) AS source_function, any_value(warnings) AS warnings, bool_and(valid) AS valid, any_value(problems) AS problems, bool_or(inferred) AS inferred, count(*) AS copies
    FROM citations WHERE result_key IN (SELECT result_key FROM claim_index_pending) GROUP BY result_key, citation_hash),
    once_cited AS MATERIALIZED (
        SELECT r.*, c.citation_hash, c.study, c.period, c.fielded, c.base_name, c.base_n, c.weight, c.source_table, c.source_column, c.source_function, c.warnings, c.valid, c.problems, c.inferred FROM stored r LEFT JOIN cited c ON c.result_key = r.result_key
        WHERE r.stored = 1)
    SELECT
        cl.value, cl.literal, cl.unit, cl.stated, cl.cell, cl.pointer, p.part_index, cl.content_hash, p.artifact_id,
        coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, r.agent, r.timestamp,
        r.source_path, r.source_sha256, cl.result_key, r.copy_id, cl.part_id, 1 AS copies, r.citation_hash, r.study, r.period, r.fielded, r.base_name, r.base_n, r.weight, r.source_table, r.source_column, r.source_function, r.warnings, r.valid, r.problems, r.inferred
    FROM (SELECT * FROM claims WHERE result_key IN (SELECT result_key FROM claim_index_pending)) cl
    JOIN parts p ON p.part_id = cl.part_id
    JOIN once_cited r ON r.copy_id = cl.copy_id
    UNION ALL
    SELECT k.*, c.citation_hash, c.study, c.period, c.fielded, c.base_name, c.base_n, c.weight, c.source_table, c.source_column, c.source_function, c.warnings, c.valid, c.problems, c.inferred
    FROM (SELECT
        cl.value, cl.literal, cl.unit, cl.stated, cl.cell, cl.pointer, p.part_index, cl.content_hash, p.artifact_id,
        coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, r.agent, r.timestamp,
        r.source_path, r.source_sha256, cl.result_key, r.copy_id, cl.part_id,
                 count(DISTINCT coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id)) OVER (PARTITION BY cl.result_key, cl.content_hash, cl.pointer) AS copies
          FROM (SELECT * FROM claims WHERE result_key IN (SELECT result_key FROM claim_index_pending)) cl
          JOIN parts p ON p.part_id = cl.part_id
          JOIN stored r ON r.copy_id = cl.copy_id AND r.stored > 1
          QUALIFY row_number() OVER (PARTITION BY cl.result_key, cl.content_hash, cl.pointer
                                     ORDER BY r.timestamp DESC NULLS LAST, r.source_path, p.ordinal) = 1) k
    LEFT JOIN cited c ON c.result_key = k.result_key)
