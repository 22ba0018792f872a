-- The archive's counts kept by the writes that change them (archiver/store/counts.py), as the claim index
-- (0015) and the audit (0016) are: what `archiver stats`, ingest's summary and serve's overview count (results,
-- copies, Parts, citations, claims, tasks, results per day and agent, the most cited studies, periods, columns
-- and tables). Each is a sum over results: `result_counts_kept` holds what each result adds to each count (a
-- row per kind and name, none where it adds 0), `counts_kept` the sums, which a refresh changes by what it
-- changed, in one transaction. A write that touches a result adds its key to `counts_pending` in its own
-- transaction; until a refresh makes its rows again, readers derive a pending result's rows from its copies.
-- An archive made before holds every result pending: its first writable open builds them.
CREATE TABLE result_counts_kept (
    result_key VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    name VARCHAR,
    day DATE,
    n BIGINT NOT NULL
);

CREATE TABLE counts_kept (
    kind VARCHAR NOT NULL,
    name VARCHAR,
    day DATE,
    n BIGINT NOT NULL
);

CREATE TABLE counts_pending (result_key VARCHAR NOT NULL);

INSERT INTO counts_pending SELECT DISTINCT result_key FROM results WHERE result_key IS NOT NULL;

-- Each kept finding also keeps its copy's agent, time and file version (the first of the copies of its result in
-- its file), which serve's pages filter and chart by: joining every finding to every copy took 0.8 s at 10M
-- claims. Every result's kept audit is made again to fill them.
ALTER TABLE audit_findings_kept ADD COLUMN agent VARCHAR;
ALTER TABLE audit_findings_kept ADD COLUMN timestamp TIMESTAMPTZ;
ALTER TABLE audit_findings_kept ADD COLUMN source_sha256 VARCHAR;
INSERT INTO audit_pending SELECT DISTINCT result_key FROM results WHERE result_key IS NOT NULL;
