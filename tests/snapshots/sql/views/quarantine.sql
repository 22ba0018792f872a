SELECT q.source_path, q.locator, q.line, q.byte_offset, q.reason, q.sha256, coalesce(q.raw, w.value) AS raw,
       q.ingested_at
FROM records q LEFT JOIN (
        SELECT value_sha256, unhex(string_agg(hex(chunk), '' ORDER BY seq)) AS value
        FROM (SELECT DISTINCT value_sha256, seq, chunk FROM value_chunks WHERE value_sha256 IN (SELECT raw_chunked FROM records WHERE status = 'quarantined'))
        GROUP BY value_sha256) w
  ON w.value_sha256 = q.raw_chunked
WHERE q.status = 'quarantined'
