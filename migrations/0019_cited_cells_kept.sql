-- The cited cells (archiver/store/cells.py): what the claim index's claims state per agent, citation (with its
-- fields), cell and unit (how many claims, how many hold a number, their sum, least and greatest), kept with the
-- claim index: each write to the index changes them in its own transaction. serve's subject pages read them
-- instead of aggregating a third of the archive's claims. Made from the claim index after this file, in its
-- transaction (`store.cells.rebuild`, `migrations.AFTER`).
CREATE TABLE cited_cells_kept (
    agent VARCHAR,
    citation_hash VARCHAR NOT NULL,
    study VARCHAR,
    period VARCHAR,
    fielded VARCHAR,
    source_table VARCHAR,
    source_column VARCHAR,
    source_function VARCHAR,
    base_n DOUBLE,
    valid BOOLEAN,
    inferred BOOLEAN,
    cell VARCHAR,
    unit VARCHAR,
    claims BIGINT NOT NULL,
    valued BIGINT NOT NULL,
    value_sum DOUBLE,
    low DOUBLE,
    high DOUBLE
);
