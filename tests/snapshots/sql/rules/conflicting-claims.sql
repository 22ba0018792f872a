WITH
single AS MATERIALIZED (
    SELECT result_key, any_value(citation_hash) AS citation_hash
    FROM citations WHERE TRUE
    GROUP BY result_key HAVING count(DISTINCT citation_hash) = 1 AND bool_and(valid)
),
quantities AS MATERIALIZED (
    SELECT citation_hash, any_value(study) AS study, any_value(period) AS period, any_value(base_name) AS base_name, any_value(weight) AS weight, any_value(source_table) AS source_table, any_value(source_column) AS source_column, any_value(source_function) AS source_function,
           md5_number(to_json(list_value(any_value(study), any_value(period), any_value(base_name), any_value(weight), any_value(source_table), any_value(source_column), any_value(source_function)))) AS quantity,
           md5(to_json(list_value(any_value(study), any_value(period), any_value(base_name), any_value(weight), any_value(source_table), any_value(source_column), any_value(source_function)))) AS quantity_text
    FROM citations WHERE citation_hash IN (SELECT citation_hash FROM single) GROUP BY citation_hash
),
cited AS MATERIALIZED (  -- of the quantities holding a copy in scope: only a claim of a copy in scope is reported
    SELECT s.result_key, q.* EXCLUDE (citation_hash, quantity_text)
    FROM single s JOIN quantities q USING (citation_hash)
    WHERE q.quantity IN (
        SELECT q.quantity FROM single s JOIN quantities q USING (citation_hash)
        WHERE s.result_key IN (SELECT result_key FROM results WHERE audit_copy_in_scope(copy_id)))
),
valued AS (  -- the claims of those results that state a finite number in a cell
    SELECT q.quantity, cl.* FROM claims cl JOIN cited q ON q.result_key = cl.result_key
    WHERE cl.value IS NOT NULL AND isfinite(cl.value) AND cl.cell IS NOT NULL
),
differing AS MATERIALIZED (  -- the quantities (and cells) whose values differ at all: over every claim at once,
    -- each a few numbers wide, so that only these claims are gathered below
    SELECT quantity, cell FROM valued GROUP BY quantity, cell HAVING max(value) > min(value)
),
spread AS MATERIALIZED (  -- of those, the ones whose values differ beyond the finest rounding
    SELECT v.quantity, v.cell FROM valued v JOIN differing USING (quantity, cell)
    GROUP BY v.quantity, v.cell
    HAVING max(v.value) - min(v.value) > 0.5 * pow(10, -max((length(split_part(split_part(lower(v.literal), 'e', 1), '.', 2))
                - coalesce(TRY_CAST(split_part(lower(v.literal), 'e', 2) AS INTEGER), 0))))
),
claimed AS MATERIALIZED (  -- each claim of those quantities once, however many copies hold it, in the cell
    -- the core found it fills (cite/claims.rs). Read from `valued` (its claims, each joined with its result's
    -- quantity), then its spread cells: joined with claims in one join on (result_key, cell), the results' quantity
    -- cells made a build side of a million rows that spilled (9-11 s a batch of 48 quantities at 10M claims, 2.3 s)
    SELECT cl.quantity, cl.result_key, cl.pointer, cl.value, arg_min(cl.literal, cl.copy_id) AS literal,
           arg_min(coalesce(cl.stated, cl.literal), cl.copy_id) AS written,  -- as the agent wrote it: "35%", 0.35
           arg_min(cl.part_id, cl.copy_id) AS part_id, min(cl.copy_id) AS copy_id, arg_min(cl.cell, cl.copy_id) AS cell
    FROM valued cl JOIN spread s ON s.quantity = cl.quantity AND s.cell = cl.cell
    GROUP BY cl.quantity, cl.result_key, cl.pointer, cl.value
),
candidates AS MATERIALIZED (  -- with the decimal places its literal was written to
    SELECT c.*, (length(split_part(split_part(lower(c.literal), 'e', 1), '.', 2))
                - coalesce(TRY_CAST(split_part(lower(c.literal), 'e', 2) AS INTEGER), 0)) AS decimals FROM claimed c
),
stated AS (  -- each value stated of a quantity, once, with a result stating it
    SELECT quantity, cell, value, min(decimals) AS decimals, arg_min(result_key, result_key) AS result_key,
           arg_min(written, result_key) AS written, arg_min(copy_id, result_key) AS copy_id
    FROM candidates GROUP BY quantity, cell, value
),
conflicting AS (
    SELECT a.*, o.result_key AS other_key, o.written AS other_written, o.copy_id AS other_copy
    FROM candidates a
    JOIN stated o ON o.quantity = a.quantity AND o.cell = a.cell AND o.result_key <> a.result_key
    CROSS JOIN LATERAL (SELECT pow(10, -a.decimals) AS mine, pow(10, -o.decimals) AS theirs) step
    WHERE abs(o.value - a.value) > 0.5 * greatest(step.mine, step.theirs)
      AND abs(100 * o.value - a.value) > 0.5 * greatest(step.mine, 100 * step.theirs)
      AND abs(o.value - 100 * a.value) > 0.5 * greatest(100 * step.mine, step.theirs)
      AND audit_copy_in_scope(a.copy_id)
    QUALIFY row_number() OVER (  -- a value in the same unit first, then the farthest
        PARTITION BY a.result_key, a.pointer
        ORDER BY abs(o.value - a.value) > least(abs(o.value - 100 * a.value), abs(100 * o.value - a.value)),
                 abs(o.value - a.value) DESC, o.result_key) = 1
),
described AS (
    SELECT k.*, q.study, q.period, q.base_name, q.weight, q.source_table, q.source_column, q.source_function
    FROM conflicting k JOIN cited q ON q.result_key = k.result_key
)
SELECT
    r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
    p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, NULL AS severity, other.source_path AS reference,
       audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) || ' claims '
       || audit_quote(k.cell) || ' = ' || k.written || ' where '
       || audit_result(other.kind, other.task_id, other.message_id) || ' claims ' || k.other_written
       || ', both citing ' || audit_quote(k.study) || ', ' || audit_quote(k.period) || ', ' || k.source_function
       || '(' || k.source_table || ', ' || k.source_column || ') on base ' || audit_quote(k.base_name) AS detail
FROM described k
JOIN results r ON r.copy_id = k.copy_id
JOIN parts p ON p.part_id = k.part_id
JOIN results other ON other.copy_id = k.other_copy
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
