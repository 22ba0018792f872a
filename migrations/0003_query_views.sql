-- Views behind `archiver query`, `show` and `export --format parquet`; also for DuckDB users directly.

-- One row per citation Part in each stored copy, with the copy's task, context, agent, time and file.
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

-- The distinct citations of each result, gathered from all its stored copies.
-- `inferred`: the citation lost its media type in at least one copy.
CREATE VIEW result_citations AS
SELECT result_key, citation_hash,
       any_value(study) AS study, any_value(period) AS period, any_value(fielded) AS fielded,
       any_value(base_name) AS base_name, any_value(base_n) AS base_n, any_value(weight) AS weight,
       any_value(source_table) AS source_table, any_value(source_column) AS source_column,
       any_value(source_function) AS source_function, any_value(warnings) AS warnings,
       bool_and(valid) AS valid, any_value(problems) AS problems, bool_or(inferred) AS inferred,
       count(*) AS copies
FROM citations
GROUP BY result_key, citation_hash;

-- One row per claim and each citation of its result. A claim is (result_key, Part content, pointer):
-- the same claim stored in several copies of its task is one claim, described by its most recent
-- copy, and rests on the citations of every copy. An uncited claim has one row with NULL citation.
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
