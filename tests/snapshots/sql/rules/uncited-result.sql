WITH uncited AS MATERIALIZED (
    SELECT r.copy_id, r.result_key, r.kind, r.task_id, r.message_id, r.context_id, r.source_path, r.locator,
           r.record_ids[1] AS record_id
    FROM results r
    WHERE r.claims > 0 AND audit_copy_in_scope(r.copy_id)
      AND r.result_key IN (SELECT result_key FROM audit_result_status WHERE finished AND NOT cited_any)
    QUALIFY r.origin IS NULL OR row_number() OVER (
        PARTITION BY CASE WHEN r.origin IS NOT NULL THEN (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id)) END
        ORDER BY CASE WHEN r.origin IS NOT NULL THEN (r.claims) END DESC, CASE WHEN r.origin IS NOT NULL THEN (r.source_path) END) = 1
),
numbered AS (
    SELECT part_id, count(*) AS numbers FROM claims WHERE copy_id IN (SELECT copy_id FROM uncited) GROUP BY part_id
),
quantitative AS (
    SELECT p.copy_id, sum(n.numbers) AS numbers,
           arg_min({'message_id': p.message_id, 'artifact_id': p.artifact_id, 'part_index': p.part_index},
                   p.ordinal) AS first,
           list_sort(list(DISTINCT coalesce(p.artifact_name, p.artifact_id))
                     FILTER (WHERE p.location = 'artifact')) AS artifacts,
           coalesce(sum(n.numbers) FILTER (WHERE p.location = 'message'), 0) AS numbers_in_messages
    FROM numbered n
    JOIN parts p ON p.part_id = n.part_id AND p.role = 'agent' AND p.kind = 'data' AND NOT p.is_citation
    GROUP BY p.copy_id
),
placed AS (
    SELECT q.*, coalesce(q.first.message_id, u.message_id) AS message_id, concat_ws(' and ',
        CASE WHEN len(q.artifacts) > 0
             THEN CASE WHEN len(q.artifacts) = 1 THEN 'artifact ' ELSE 'artifacts ' END
                  || array_to_string(list_transform(q.artifacts, a -> audit_quote(a)), ', ') END,
        CASE WHEN q.numbers_in_messages > 0 THEN 'an agent message' END) AS places
    FROM quantitative q
    JOIN uncited u ON u.copy_id = q.copy_id
)
SELECT u.result_key, u.task_id, q.message_id, u.context_id, q.first.artifact_id, q.first.part_index, u.source_path,
       coalesce(rec.locator, u.locator) AS locator, rec.line, NULL AS severity,
       audit_result(u.kind, u.task_id, q.message_id) || ' states ' || q.numbers || ' number'
       || CASE WHEN q.numbers = 1 THEN '' ELSE 's' END || CASE WHEN q.places = '' THEN '' ELSE ' in ' || q.places END
       || ' and carries no citation Part' AS detail
FROM placed q
JOIN uncited u ON u.copy_id = q.copy_id
LEFT JOIN records rec ON rec.record_id = u.record_id AND rec.source_path = u.source_path
