SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, c.source_path, rec.locator, rec.line, NULL AS severity,
       'agent card ' || audit_quote(c.name) || CASE WHEN c.declares_extension
           THEN ' declares the Citations v1 extension but lists its media type '
                || 'in neither defaultOutputModes nor any skill''s outputModes'
           ELSE ' lists the citations media type among its output modes '
                || 'but does not declare the Citations v1 extension' END AS detail
FROM agent_cards c
LEFT JOIN records rec ON rec.record_id = c.record_id AND rec.source_path = c.source_path
WHERE c.declares_extension <> c.lists_media_type
  AND c.card_id IN (SELECT card_id FROM audit_cards)
