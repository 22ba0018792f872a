-- Claim keys where the queries need them: a claim is (result_key, Part content, pointer),
-- so `claims` carries its Part's content hash, and each stored copy carries how many distinct
-- claims it holds. Lineage questions then count and deduplicate claims without joining `parts`
-- for every claim of the archive. Ingest fills both; this backfills archives made before.
ALTER TABLE claims ADD COLUMN content_hash VARCHAR;
ALTER TABLE results ADD COLUMN claims INTEGER;

UPDATE claims SET content_hash = p.content_hash
FROM parts p WHERE p.part_id = claims.part_id;

UPDATE results SET claims = coalesce(n.claims, 0)
FROM (SELECT r.copy_id, n.claims FROM results r
      LEFT JOIN (SELECT copy_id, count(DISTINCT (content_hash, pointer)) AS claims FROM claims GROUP BY copy_id) n
        ON n.copy_id = r.copy_id) n
WHERE n.copy_id = results.copy_id;
