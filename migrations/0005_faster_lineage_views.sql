-- Agents by join rather than per-row subqueries, and claim_lineage with the per-result semantics
-- of claim_citations (a claim rests on the citations of every stored copy of its result).

DROP VIEW claim_lineage;
DROP VIEW citation_index;
DROP VIEW claim_citations;
DROP VIEW citation_uses;
DROP VIEW result_agents;

CREATE VIEW result_agents AS
SELECT r.copy_id, coalesce(in_file.agent, in_dir.agent) AS agent
FROM results r
LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
       ON in_file.source_path = r.source_path
LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
       ON in_dir.source_dir = r.source_dir;

CREATE VIEW citation_uses AS
SELECT c.citation_hash, c.study, c.period, c.fielded, c.fielded_start, c.fielded_end,
       c.base_name, c.base_n, c.weight, c.source_table, c.source_column, c.source_function,
       c.warnings, c.valid, c.problems, c.inferred, c.part_id AS citation_part_id,
       r.copy_id, r.result_key, r.kind AS result_kind, r.task_id,
       coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
       a.agent, r.timestamp, r.source_path
FROM citations c
JOIN results r ON r.copy_id = c.copy_id
JOIN parts p ON p.part_id = c.part_id
JOIN result_agents a ON a.copy_id = c.copy_id;

CREATE VIEW claim_citations AS
WITH claim_copies AS (
    SELECT cl.value, cl.literal, cl.pointer, p.part_index, p.content_hash, p.artifact_id,
           coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, a.agent,
           r.timestamp, r.source_path, cl.result_key, r.copy_id, cl.part_id,
           row_number() OVER claim_window AS copy_rank,
           count(*) OVER (PARTITION BY cl.result_key, p.content_hash, cl.pointer) AS copies
    FROM claims cl
    JOIN parts p ON p.part_id = cl.part_id
    JOIN results r ON r.copy_id = cl.copy_id
    JOIN result_agents a ON a.copy_id = cl.copy_id
    WINDOW claim_window AS (PARTITION BY cl.result_key, p.content_hash, cl.pointer
                            ORDER BY r.timestamp DESC NULLS LAST, r.source_path, p.ordinal)
)
SELECT k.value, k.literal, k.pointer, k.part_index, k.task_id, k.message_id, k.context_id, k.artifact_id,
       k.agent, k.timestamp, k.source_path, k.result_key, k.content_hash, k.copy_id, k.part_id, k.copies,
       c.citation_hash, c.study, c.period, c.fielded, c.base_name, c.base_n, c.weight,
       c.source_table, c.source_column, c.source_function, c.warnings, c.valid, c.problems, c.inferred
FROM claim_copies k
LEFT JOIN result_citations c ON c.result_key = k.result_key
WHERE k.copy_rank = 1;

-- One row per claim and each citation it rests on (same as claim_citations; the documented name).
CREATE VIEW claim_lineage AS SELECT * FROM claim_citations;

-- One row per distinct citation with how much rests on it.
CREATE VIEW citation_index AS
SELECT u.citation_hash, any_value(u.study) AS study, any_value(u.period) AS period,
       any_value(u.fielded) AS fielded, any_value(u.base_name) AS base_name, any_value(u.base_n) AS base_n,
       any_value(u.weight) AS weight, any_value(u.source_table) AS source_table,
       any_value(u.source_column) AS source_column, any_value(u.source_function) AS source_function,
       any_value(u.warnings) AS warnings, bool_and(u.valid) AS valid, any_value(u.problems) AS problems,
       bool_or(u.inferred) AS inferred, count(DISTINCT u.result_key) AS results,
       count(DISTINCT u.task_id) AS tasks, count(DISTINCT u.agent) AS agents
FROM citation_uses u
GROUP BY u.citation_hash;
