-- Values of any size in bounded memory. DuckDB keeps a value of about 64 kB and more pinned in memory until
-- a checkpoint writes it out, so a few hundred MB of them (inline file Parts: images, PDFs, CSV extracts)
-- failed a commit at any memory limit. A value longer than 30 KiB in one of the columns below is stored
-- instead in `value_chunks`: its bytes in order, 30 KiB a row, under the SHA-256 of the whole value (so the
-- same value is stored once, however many rows hold it). The cell itself is NULL and its `<column>_chunked`
-- names the value's SHA-256 (archiver/store/chunks.py reads such values back whole).
CREATE TABLE value_chunks (
    value_sha256 VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    chunk BLOB NOT NULL
);
ALTER TABLE records ADD COLUMN raw_chunked VARCHAR;
ALTER TABLE parts ADD COLUMN text_chunked VARCHAR;
ALTER TABLE parts ADD COLUMN data_chunked VARCHAR;
ALTER TABLE parts ADD COLUMN file_chunked VARCHAR;
ALTER TABLE parts ADD COLUMN metadata_chunked VARCHAR;
ALTER TABLE citations ADD COLUMN extra_chunked VARCHAR;
ALTER TABLE agent_cards ADD COLUMN card_chunked VARCHAR;
ALTER TABLE rpc_errors ADD COLUMN message_chunked VARCHAR;
