WITH copied AS (
    SELECT result_key FROM audit_result_status WHERE copies_all > 1
),
units AS MATERIALIZED (
    SELECT r.copy_id, coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id) AS unit
    FROM results r WHERE r.result_key IN (SELECT result_key FROM copied)
),
held AS MATERIALIZED (
    SELECT DISTINCT u.unit, p.result_key, p.content_hash
    FROM parts p JOIN units u ON u.copy_id = p.copy_id
    WHERE p.role = 'agent' AND p.kind <> 'unknown'
),
undecoded AS (
    SELECT DISTINCT p.copy_id
    FROM parts p
    WHERE p.role = 'agent' AND p.kind = 'unknown' AND p.result_key IN (SELECT result_key FROM copied)
),
fewer AS MATERIALIZED (
    SELECT r.copy_id, r.result_key, r.task_id, r.source_path, r.source_sha256
    FROM results r
    JOIN (SELECT result_key, count(DISTINCT content_hash) AS n FROM held GROUP BY result_key) whole
      ON whole.result_key = r.result_key
    LEFT JOIN (SELECT unit, count(*) AS n FROM held GROUP BY unit) mine ON mine.unit = r.copy_id
    WHERE r.terminal AND r.origin IS NULL AND coalesce(mine.n, 0) < whole.n
      AND r.copy_id NOT IN (SELECT copy_id FROM undecoded)
      AND audit_copy_in_scope(r.copy_id)
),
unreadable AS (
    SELECT DISTINCT f.copy_id
    FROM fewer f
    JOIN sources mine ON mine.path = f.source_path AND mine.sha256 = f.source_sha256
    JOIN sources v ON v.path = mine.path AND coalesce(v.lineage, v.sha256) = coalesce(mine.lineage, mine.sha256)
    JOIN records rec ON rec.source_path = v.path AND rec.source_sha256 = v.sha256
    LEFT JOIN (
        SELECT value_sha256, unhex(string_agg(hex(chunk), '' ORDER BY seq)) AS value
        FROM (SELECT DISTINCT value_sha256, seq, chunk FROM value_chunks WHERE value_sha256 IN (SELECT raw_chunked FROM records WHERE status = 'quarantined'))
        GROUP BY value_sha256) w
      ON w.value_sha256 = rec.raw_chunked
    WHERE rec.status = 'quarantined' AND f.task_id IS NOT NULL
      AND contains(CAST(coalesce(rec.raw, w.value) AS VARCHAR),
                   CAST(encode('"' || f.task_id || '"') AS VARCHAR))  -- both escaped alike
),
short AS MATERIALIZED (
    SELECT copy_id, result_key FROM fewer WHERE copy_id NOT IN (SELECT copy_id FROM unreadable)
),
missing AS (
    SELECT s.copy_id, h.result_key, h.content_hash
    FROM short s
    JOIN (SELECT DISTINCT result_key, content_hash FROM held
          WHERE result_key IN (SELECT result_key FROM short)) h ON h.result_key = s.result_key
    WHERE NOT EXISTS (
        SELECT 1 FROM held mine WHERE mine.unit = s.copy_id AND mine.content_hash = h.content_hash
    )
),
examples AS (
    SELECT p.result_key, p.content_hash, bool_or(p.is_citation) AS citation,
           arg_min(p.part_id, (holder.origin IS NULL, NOT holder.terminal, p.source_path, p.ordinal)) AS example
    FROM parts p
    JOIN (SELECT DISTINCT result_key, content_hash FROM missing) wanted
      ON wanted.result_key = p.result_key AND wanted.content_hash = p.content_hash
    JOIN results holder ON holder.copy_id = p.copy_id
    WHERE p.role = 'agent' AND p.result_key IN (SELECT result_key FROM short)
    GROUP BY p.result_key, p.content_hash
)
SELECT r.result_key, r.task_id, coalesce(e.message_id, r.message_id) AS message_id, r.context_id, e.artifact_id,
       e.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line,
       CASE WHEN x.citation THEN 'error' ELSE 'warning' END AS severity,
       CASE WHEN holder.origin IS NULL THEN NULL ELSE holder.source_path END AS reference,
       audit_dropped(holder.origin IS NOT NULL, coalesce(nullif(r.state, ''), 'terminal'),
                     audit_result(r.kind, r.task_id, coalesce(e.message_id, r.message_id)),
                     CASE WHEN x.citation THEN 'citation' ELSE coalesce(e.kind, 'None') END,
                     coalesce(nullif(holder.state, ''), 'stored'), holder.source_path,
                     'Part ' || coalesce(CAST(e.part_index AS VARCHAR), 'None') || ' of '
                     || CASE WHEN e.location = 'artifact'
                             THEN 'artifact ' || audit_quote(coalesce(e.artifact_name, e.artifact_id))
                             ELSE audit_message(coalesce(e.message_id, r.message_id)) END) AS detail
FROM missing m
JOIN results r ON r.copy_id = m.copy_id
JOIN examples x ON x.result_key = m.result_key AND x.content_hash = m.content_hash
JOIN parts e ON e.part_id = x.example
JOIN results holder ON holder.copy_id = e.copy_id
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
