    WITH uses AS MATERIALIZED (
        SELECT u.* FROM (
            SELECT c.*, r.task_id, r.agent, r.timestamp
            FROM citations c JOIN (
    SELECT x.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM (SELECT * FROM results r WHERE TRUE) x
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = x.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = x.source_dir) r ON r.copy_id = c.copy_id) u
        WHERE TRUE),
    stored AS (
        SELECT result_key, count(*) AS copies, sum(claims) AS claims FROM results
        WHERE result_key IN (SELECT result_key FROM uses) GROUP BY result_key),
    claim_counts AS (
        SELECT s.result_key, CASE WHEN s.copies = 1 THEN s.claims ELSE coalesce(m.claims, 0) END AS claims
        FROM stored s
        LEFT JOIN (SELECT result_key, count(DISTINCT (content_hash, pointer)) AS claims FROM claims
                   WHERE result_key IN (SELECT result_key FROM stored WHERE copies > 1)
                   GROUP BY result_key) m ON m.result_key = s.result_key),
    citation_claims AS (
        SELECT h.citation_hash, sum(cc.claims) AS claims
        FROM (SELECT DISTINCT citation_hash, result_key FROM uses) h
        JOIN claim_counts cc ON cc.result_key = h.result_key
        GROUP BY h.citation_hash),
    grouped AS (
        SELECT u.citation_hash, any_value(u.study) AS study, any_value(u.period) AS period, any_value(u.fielded) AS fielded, any_value(u.base_name) AS base_name, any_value(u.base_n) AS base_n, any_value(u.weight) AS weight, any_value(u.source_table) AS source_table, any_value(u.source_column) AS source_column, any_value(u.source_function) AS source_function, any_value(u.warnings) AS warnings, bool_and(u.valid) AS valid, any_value(u.problems) AS problems, bool_or(u.inferred) AS inferred, count(DISTINCT u.result_key) AS results,
               count(DISTINCT u.task_id) AS tasks, count(DISTINCT u.agent) AS agents
        FROM uses u GROUP BY u.citation_hash)
    SELECT g.study, g.period, g.fielded, g.base_name, g.base_n, g.weight, g.source_table, g.source_column, g.source_function, g.warnings, g.valid, g.problems, g.inferred, coalesce(cc.claims, 0)::BIGINT AS claims,
           g.results, g.tasks, g.agents, g.citation_hash
    FROM grouped g LEFT JOIN citation_claims cc ON cc.citation_hash = g.citation_hash
