CREATE OR REPLACE TEMP TABLE audit_cited_parts AS
SELECT
    r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
    p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, c.valid, c.problems, c.inferred, c.base_n, c.base_name,
       coalesce(NOT c.valid, FALSE) AND (r.origin IS NULL OR row_number() OVER (
        PARTITION BY CASE WHEN r.origin IS NOT NULL THEN (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash) END, coalesce(NOT c.valid, FALSE) ORDER BY CASE WHEN r.origin IS NOT NULL THEN (r.source_path, rec.line) END) = 1) AS first_invalid, coalesce(c.inferred, FALSE) AND (r.origin IS NULL OR row_number() OVER (
        PARTITION BY CASE WHEN r.origin IS NOT NULL THEN (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash) END, coalesce(c.inferred, FALSE) ORDER BY CASE WHEN r.origin IS NOT NULL THEN (r.source_path, rec.line) END) = 1) AS first_lost,
       coalesce(c.base_n > 0 AND c.base_n = floor(c.base_n) AND c.base_n < $min_base, FALSE) AND (r.origin IS NULL OR row_number() OVER (
        PARTITION BY CASE WHEN r.origin IS NOT NULL THEN (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash) END, coalesce(c.base_n > 0 AND c.base_n = floor(c.base_n) AND c.base_n < $min_base, FALSE) ORDER BY CASE WHEN r.origin IS NOT NULL THEN (r.source_path, rec.line) END) = 1) AS first_small,
       'citation ' || audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                                     coalesce(p.message_id, r.message_id))
    || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) AS citation_part,
       'data ' || audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                                   coalesce(p.message_id, r.message_id))
       || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) AS data_part,
       CASE WHEN c.inferred THEN p.media_type END AS media_type,
       CASE WHEN c.inferred
            THEN list_filter(['study', 'period', 'base', 'source'], k -> json_exists(coalesce(p.data, CAST(decode(wd.value) AS JSON)), '$.' || k)) END AS keys
FROM (SELECT * FROM citations c
      WHERE (NOT c.valid OR c.inferred OR (c.base_n > 0 AND c.base_n = floor(c.base_n) AND c.base_n < $min_base)) AND audit_copy_in_scope(c.copy_id)) c
JOIN parts p ON p.part_id = c.part_id AND p.is_citation
LEFT JOIN (
        SELECT value_sha256, unhex(string_agg(hex(chunk), '' ORDER BY seq)) AS value
        FROM (SELECT DISTINCT value_sha256, seq, chunk FROM value_chunks WHERE value_sha256 IN (SELECT data_chunked FROM parts WHERE is_citation AND data_chunked IS NOT NULL))
        GROUP BY value_sha256) wd ON wd.value_sha256 = p.data_chunked
JOIN results r ON r.copy_id = c.copy_id
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
