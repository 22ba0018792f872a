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
