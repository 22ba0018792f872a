-- Each `archiver verify` run, as events appended when it starts and when it finishes (never updated in
-- place): a run with a start and no finish was interrupted, and the next run resumes it by default,
-- re-running only the citations without a current verdict.
CREATE TABLE verify_runs (
    run_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    logged_at TIMESTAMPTZ NOT NULL,
    data_layer VARCHAR
);
-- How far the rows a verdict used reach: the share of the fielded window their dates cover and the
-- rows (and weighted sum) against the citation's base n, e.g. "dates 2026-04-01..2026-04-15: 15 of 30
-- days of the window, 15 missing; 300 rows for base n=600". A verdict whose rows fall short is `partial`.
ALTER TABLE verdicts ADD COLUMN coverage VARCHAR;
-- Every file a verdict rests on, with its SHA-256 ({"files": {path: sha256}, "loaded": [path]}): the
-- table's files, the extractor's code, its declared `inputs`, and ("loaded") the project's modules it
-- imported while it ran, which the fingerprint covers too. `verify --status` names the files changed since.
ALTER TABLE verdicts ADD COLUMN inputs JSON;
-- TRUE when the comparison was given on verify's command line (`--tolerance`), not the data layer's: such a
-- verdict is shown as the latest, but the audit judges each citation by its latest verdict made under the
-- data layer's own comparison, so a looser run does not make a `rerun-differs` error go away.
ALTER TABLE verdicts ADD COLUMN comparison_given BOOLEAN;
