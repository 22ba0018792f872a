-- The first archive schema. No PRIMARY KEY, UNIQUE or index on bulk tables:
-- keys are content hashes, deduplicated by batch anti-joins (portable to DuckLake).
CREATE TABLE sources (
    path VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    size BIGINT,
    container VARCHAR,
    compression VARCHAR,
    records BIGINT,
    quarantined BIGINT,
    recognised BIGINT,
    ingested_at TIMESTAMPTZ
);

CREATE TABLE records (
    record_id VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    seq BIGINT,
    locator VARCHAR NOT NULL,
    line BIGINT,
    byte_offset BIGINT,
    kind VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    raw BLOB,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    ingested_at TIMESTAMPTZ
);

CREATE TABLE results (
    copy_id VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    task_id VARCHAR,
    context_id VARCHAR,
    message_id VARCHAR,
    state VARCHAR,
    terminal BOOLEAN NOT NULL,
    timestamp TIMESTAMPTZ,
    source_path VARCHAR NOT NULL,
    source_dir VARCHAR NOT NULL,
    locator VARCHAR,
    record_ids VARCHAR[]
);

CREATE TABLE parts (
    part_id VARCHAR NOT NULL,
    copy_id VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    role VARCHAR NOT NULL,
    location VARCHAR NOT NULL,
    artifact_id VARCHAR,
    artifact_name VARCHAR,
    message_id VARCHAR,
    part_index INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    media_type VARCHAR,
    content_hash VARCHAR NOT NULL,
    text VARCHAR,
    data JSON,
    file JSON,
    metadata JSON,
    is_citation BOOLEAN NOT NULL
);

CREATE TABLE citations (
    part_id VARCHAR NOT NULL,
    copy_id VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    citation_hash VARCHAR NOT NULL,
    study VARCHAR,
    period VARCHAR,
    fielded VARCHAR,
    fielded_start DATE,
    fielded_end DATE,
    base_name VARCHAR,
    base_n DOUBLE,
    weight VARCHAR,
    source_table VARCHAR,
    source_column VARCHAR,
    source_function VARCHAR,
    warnings VARCHAR[],
    extra JSON,
    valid BOOLEAN NOT NULL,
    problems VARCHAR[],
    inferred BOOLEAN NOT NULL
);

CREATE TABLE claims (
    part_id VARCHAR NOT NULL,
    pointer VARCHAR NOT NULL,
    copy_id VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    value DOUBLE,
    literal VARCHAR NOT NULL
);

CREATE TABLE agent_cards (
    card_id VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    source_dir VARCHAR NOT NULL,
    record_id VARCHAR NOT NULL,
    name VARCHAR,
    url VARCHAR,
    declares_extension BOOLEAN NOT NULL,
    lists_media_type BOOLEAN NOT NULL,
    card JSON
);

CREATE TABLE rpc_errors (
    record_id VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    rpc_id VARCHAR,
    code VARCHAR,
    message VARCHAR
);
