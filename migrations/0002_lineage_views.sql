-- Views for people who query the archive with DuckDB directly.

-- Records that could not be parsed or understood, with the one-line reason.
CREATE VIEW quarantine AS
SELECT source_path, locator, line, byte_offset, reason, sha256, raw, ingested_at
FROM records WHERE status = 'quarantined';

-- The agent of each stored copy: the agent card in the same file, else in the same directory.
CREATE VIEW result_agents AS
SELECT r.copy_id,
       coalesce(
           (SELECT min(c.name) FROM agent_cards c WHERE c.source_path = r.source_path),
           (SELECT min(c.name) FROM agent_cards c WHERE c.source_dir = r.source_dir)
       ) AS agent
FROM results r;

-- One row per claim and citation of its result (per stored copy).
CREATE VIEW claim_lineage AS
SELECT cl.value, cl.literal, cl.pointer, p.part_index, p.location, p.artifact_id, p.artifact_name,
       r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, a.agent,
       r.timestamp, r.state, r.source_path, r.result_key, r.copy_id,
       c.study, c.period, c.fielded, c.base_name, c.base_n, c.weight,
       c.source_table, c.source_column, c.source_function, c.warnings,
       c.valid, c.problems, c.inferred, c.citation_hash
FROM claims cl
JOIN parts p ON p.part_id = cl.part_id
JOIN results r ON r.copy_id = cl.copy_id
JOIN result_agents a ON a.copy_id = r.copy_id
LEFT JOIN citations c ON c.copy_id = cl.copy_id;

-- One row per distinct citation with how much rests on it.
CREATE VIEW citation_index AS
SELECT c.citation_hash, any_value(c.study) AS study, any_value(c.period) AS period,
       any_value(c.fielded) AS fielded, any_value(c.base_name) AS base_name, any_value(c.base_n) AS base_n,
       any_value(c.weight) AS weight, any_value(c.source_table) AS source_table,
       any_value(c.source_column) AS source_column, any_value(c.source_function) AS source_function,
       any_value(c.warnings) AS warnings, bool_and(c.valid) AS valid, any_value(c.problems) AS problems,
       bool_or(c.inferred) AS inferred,
       (SELECT count(DISTINCT (cl.result_key, cl.pointer, p.content_hash))
          FROM claims cl JOIN parts p ON p.part_id = cl.part_id
         WHERE cl.copy_id IN (SELECT copy_id FROM citations x WHERE x.citation_hash = c.citation_hash)) AS claims,
       count(DISTINCT c.result_key) AS results,
       count(DISTINCT r.task_id) AS tasks,
       count(DISTINCT a.agent) AS agents
FROM citations c
JOIN results r ON r.copy_id = c.copy_id
JOIN result_agents a ON a.copy_id = c.copy_id
GROUP BY c.citation_hash;
