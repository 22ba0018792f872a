-- Each `archiver verify` run, as events appended when it starts and when it finishes (never updated in
-- place): a run with a start and no finish was interrupted, and the next run resumes it by default,
-- re-running only the citations without a current verdict.
CREATE TABLE verify_runs (
    run_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    logged_at TIMESTAMPTZ NOT NULL,
    data_layer VARCHAR
);
