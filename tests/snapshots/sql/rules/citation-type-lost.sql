SELECT result_key, task_id, message_id, context_id, artifact_id, part_index, source_path, locator,
       line, NULL AS severity,
       data_part || ' carries a citation''s fields (' || array_to_string(keys, ', ') || ') but '
       || CASE WHEN coalesce(media_type, '') = '' THEN 'no media type' ELSE 'media type ' || media_type END
       || ', so consumers do not recognise it as a citation' AS detail
FROM audit_cited_parts
WHERE first_lost
