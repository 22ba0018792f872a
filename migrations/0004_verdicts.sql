-- Re-run verdicts: one row per citation of a result per `archiver verify` run.
-- Append-only, no PRIMARY KEY, UNIQUE or index (portable to DuckLake): the latest row per
-- (result_key, citation_hash) is the citation's current verdict.
CREATE TABLE verdicts (
    verified_at TIMESTAMPTZ NOT NULL,
    run_id VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    citation_hash VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL,            -- reproduced | differs | not-rerunnable
    reason VARCHAR,                      -- one sentence: why not re-runnable, or what differs
    differences JSON,                    -- [{pointer, claimed, rerun}] for differs
    claims INTEGER,                      -- how many claims were compared
    tolerance DOUBLE,                    -- the relative tolerance used
    extractor VARCHAR,                   -- the declared function, e.g. extractors.py:extract_funnel
    extractor_version VARCHAR,
    table_sha256 VARCHAR,                -- content hash of the table file(s) re-run over
    fingerprint VARCHAR NOT NULL,        -- what this verdict rests on: table content + extractor
    data_layer VARCHAR,                  -- the data layer file
    data_layer_sha256 VARCHAR            -- the whole data layer: its file, every table, every extractor
);

-- The view of each citation's current verdict, latest_verdicts, is made from archiver/store/views.py.
