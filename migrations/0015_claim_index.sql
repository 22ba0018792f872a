-- The claim index: each claim counted once with its result's citation (the view `claim_citations_derived`,
-- archiver/store/views.py, is its definition), kept by the writes that change it (archiver/store/kept.py)
-- instead of derived on every read. A write that touches a result adds its key to `claim_index_pending`
-- in its own transaction; the index rows of pending results are then made again from the definition, a
-- batch of results a transaction, and their keys removed. Until then readers take a pending result's rows
-- from the definition, so an answer never depends on whether a refresh ran. An archive made before holds
-- every result pending: its first writable open builds the index (`archiver db upgrade` shows progress).
CREATE TABLE claim_index (
    value DOUBLE,
    literal VARCHAR NOT NULL,
    unit VARCHAR,
    stated VARCHAR,
    cell VARCHAR,
    pointer VARCHAR NOT NULL,
    part_index INTEGER,
    content_hash VARCHAR,
    artifact_id VARCHAR,
    message_id VARCHAR,
    task_id VARCHAR,
    context_id VARCHAR,
    agent VARCHAR,
    timestamp TIMESTAMPTZ,
    source_path VARCHAR NOT NULL,
    source_sha256 VARCHAR,
    result_key VARCHAR NOT NULL,
    copy_id VARCHAR NOT NULL,
    part_id VARCHAR NOT NULL,
    copies BIGINT NOT NULL,
    citation_hash VARCHAR,
    study VARCHAR,
    period VARCHAR,
    fielded VARCHAR,
    base_name VARCHAR,
    base_n DOUBLE,
    weight VARCHAR,
    source_table VARCHAR,
    source_column VARCHAR,
    source_function VARCHAR,
    warnings VARCHAR[],
    valid BOOLEAN,
    problems VARCHAR[],
    inferred BOOLEAN
);

CREATE TABLE claim_index_pending (result_key VARCHAR NOT NULL);

INSERT INTO claim_index_pending SELECT DISTINCT result_key FROM results;
