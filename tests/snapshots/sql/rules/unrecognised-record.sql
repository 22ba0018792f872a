SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, rec.source_path, rec.locator, rec.line, NULL AS severity,
       'record at ' || coalesce(rec.locator, 'None') || ' was read but yields no result and no known non-result: '
       || coalesce(rec.reason, 'None') AS detail
FROM records rec
WHERE rec.status = 'ok' AND rec.yields = 'nothing' AND rec.record_id IN (SELECT record_id FROM audit_records)
