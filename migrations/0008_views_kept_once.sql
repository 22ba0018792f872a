-- The views' SQL now lives in one place (archiver/store/views.py): they are made after every upgrade,
-- and re-made when their definitions change, which this table records.
DROP VIEW IF EXISTS claim_lineage;
DROP VIEW IF EXISTS citation_index;
DROP VIEW IF EXISTS claim_citations;
DROP VIEW IF EXISTS result_citations;
DROP VIEW IF EXISTS citation_uses;
DROP VIEW IF EXISTS result_agents;
DROP VIEW IF EXISTS quarantine;
DROP VIEW IF EXISTS latest_verdicts;

CREATE TABLE schema_views (
    fingerprint VARCHAR NOT NULL,  -- SHA-256 of the view definitions the archive's views were made from
    made_at TIMESTAMPTZ
);
