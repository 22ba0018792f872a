SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, rec.source_path, rec.locator, rec.line, NULL AS severity,
       'record at ' || coalesce(rec.locator, 'None') || ' was quarantined at ingest ('
       || coalesce(rec.reason, 'None') || '); it may hide a result' AS detail
FROM records rec
WHERE rec.status = 'quarantined' AND rec.record_id IN (SELECT record_id FROM audit_records)
  AND NOT EXISTS (  -- a file that could not be read, and was read since: nothing is hidden any more
      SELECT 1 FROM sources unread JOIN sources since
        ON since.path = unread.path AND since.ingested_at > unread.ingested_at
       AND since.container IS DISTINCT FROM 'unreadable'
      WHERE unread.path = rec.source_path AND unread.sha256 = rec.source_sha256 AND unread.container = 'unreadable')
