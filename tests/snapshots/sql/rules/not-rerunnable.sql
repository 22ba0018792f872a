SELECT r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
       p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, NULL AS severity,
       'the citation ' || coalesce(nullif(c.source_function, ''), '?') || '('
    || coalesce(nullif(c.source_table, ''), '?') || ', ' || coalesce(nullif(c.source_column, ''), '?') || ') of '
    || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) || ' cannot be re-run: ' || coalesce(v.reason, 'None') || ' (verified ' || coalesce(audit_iso(v.verified_at), '?') || ')' AS detail
FROM (
SELECT * FROM verdicts WHERE NOT coalesce(comparison_given, FALSE)
QUALIFY row_number() OVER (PARTITION BY result_key, citation_hash ORDER BY verified_at DESC, run_id DESC) = 1) v
JOIN citations c ON c.result_key = v.result_key AND c.citation_hash = v.citation_hash
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
WHERE v.verdict = 'not-rerunnable' AND audit_copy_in_scope(c.copy_id)
