SELECT
    r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
    p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, NULL AS severity,
       audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                        coalesce(p.message_id, r.message_id))
       || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id))
       || ' could not be decoded (keys: ' || coalesce(array_to_string(list_sort(json_keys(coalesce(p.data, CAST(decode(wd.value) AS JSON)))), ', '), '')
       || CASE WHEN p.media_type IS NULL THEN '' ELSE '; media type ' || p.media_type END
       || '): it is stored raw, and no evidence of a dropped Part' AS detail
FROM (SELECT * FROM parts WHERE kind = 'unknown' AND audit_copy_in_scope(copy_id)) p
JOIN (SELECT * FROM results WHERE copy_id IN (SELECT copy_id FROM parts WHERE kind = 'unknown')) r
  ON r.copy_id = p.copy_id
LEFT JOIN (
        SELECT value_sha256, unhex(string_agg(hex(chunk), '' ORDER BY seq)) AS value
        FROM (SELECT DISTINCT value_sha256, seq, chunk FROM value_chunks WHERE value_sha256 IN (SELECT data_chunked FROM parts WHERE kind = 'unknown' AND data_chunked IS NOT NULL))
        GROUP BY value_sha256) wd ON wd.value_sha256 = p.data_chunked
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path

QUALIFY r.origin IS NULL OR row_number() OVER (
    PARTITION BY CASE WHEN r.origin IS NOT NULL THEN (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash) END
    ORDER BY CASE WHEN r.origin IS NOT NULL THEN (r.source_path) END, CASE WHEN r.origin IS NOT NULL THEN (rec.line) END) = 1
