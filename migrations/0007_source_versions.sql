-- Sources by content. A source version is its bytes (SHA-256); every index row names the version that
-- wrote it (`source_sha256`), so that a rewritten file adds a version beside the earlier one instead of
-- replacing it, and so that rows of a version whose `sources` row never committed can be found and
-- removed (a commit group's `sources` rows are written last: they are its commit marker).
--   sources.lineage   the first version of a chain of versions that each extend the one before (a
--                     growing log); a later version of the chain replaces the earlier one's index rows.
--   sources.alias_of  for a path found holding bytes already stored at another path: that path. An
--                     alias row adds nothing else to the index.
-- Archives made before: every version at a path was one chain (each replaced the one before), so a
-- path's lineage is its first version; index rows belong to the path's latest version; records to the
-- version ingested with them.
ALTER TABLE sources ADD COLUMN lineage VARCHAR;
ALTER TABLE sources ADD COLUMN alias_of VARCHAR;
ALTER TABLE records ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE results ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE parts ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE citations ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE claims ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE agent_cards ADD COLUMN source_sha256 VARCHAR;
ALTER TABLE rpc_errors ADD COLUMN source_sha256 VARCHAR;

-- What opening an archive for writing removed: index rows of file versions that no committed ingest
-- recorded (a storage engine may replay a killed transaction's large appends without the rest).
CREATE TABLE healed (
    healed_at TIMESTAMPTZ NOT NULL,
    table_name VARCHAR NOT NULL,
    source_path VARCHAR,
    source_sha256 VARCHAR,
    rows BIGINT NOT NULL
);

UPDATE sources SET lineage = f.sha256
FROM (SELECT path, arg_min(sha256, ingested_at) AS sha256 FROM sources GROUP BY path) f
WHERE f.path = sources.path;

UPDATE records SET source_sha256 = s.sha256
FROM sources s WHERE s.path = records.source_path AND s.ingested_at = records.ingested_at;

CREATE TEMP TABLE _latest AS SELECT path, arg_max(sha256, ingested_at) AS sha256 FROM sources GROUP BY path;
UPDATE results t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
UPDATE parts t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
UPDATE citations t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
UPDATE claims t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
UPDATE agent_cards t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
UPDATE rpc_errors t SET source_sha256 = l.sha256 FROM _latest l WHERE l.path = t.source_path;
DROP TABLE _latest;

-- Archives made before stored the same bytes found at two paths twice, and counted their results twice.
-- A path whose one version holds the bytes of another path's one version, stored first, becomes that
-- path's alias, and its rows go (the bytes stay stored under the first path).
CREATE TEMP TABLE _aliases AS
SELECT s.path, f.path AS first_path FROM sources s
JOIN (SELECT sha256, arg_min(path, ingested_at) AS path FROM sources WHERE size > 0 GROUP BY sha256
      HAVING count(DISTINCT path) > 1) f ON f.sha256 = s.sha256 AND f.path <> s.path
WHERE (SELECT count(*) FROM sources o WHERE o.path = s.path) = 1
  AND (SELECT count(*) FROM sources o WHERE o.path = f.path) = 1;
DELETE FROM records WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM results WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM parts WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM citations WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM claims WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM agent_cards WHERE source_path IN (SELECT path FROM _aliases);
DELETE FROM rpc_errors WHERE source_path IN (SELECT path FROM _aliases);
UPDATE sources SET alias_of = a.first_path FROM _aliases a WHERE a.path = sources.path;
DROP TABLE _aliases;
