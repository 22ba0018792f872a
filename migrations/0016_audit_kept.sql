-- The audit kept by the writes that change it (archiver/audit/kept.py), as the claim index is (0015): each
-- result's status (`audit_status_kept`: how many copies, finished, quantitative, cited, validly cited, its
-- agent and study) and the findings of the rules that judge one result from its own copies
-- (`audit_findings_kept`: uncited-result, invalid-citation, citation-type-lost, small-base at the default
-- minimum base, dropped-part, undecoded-part), and conflicting-claims, made a quantity at a time: each result
-- resting on one valid citation has its quantity in `audit_quantities_kept`, and the quantities a refresh
-- changed the results of wait in `audit_quantities_pending`. Their definition is the audit's own queries
-- (archiver/audit/rules.py, summary.py) over the whole archive. A write that touches a result adds its key to
-- `audit_pending` in its own transaction (with `claim_index_pending`); a refresh makes the pending results'
-- rows again, a batch a transaction, and removes their keys; until then an audit derives a pending result's
-- rows, so its answer never depends on whether a refresh ran. An archive made before holds every result
-- pending: its first writable open builds them.
CREATE TABLE audit_status_kept (
    result_key VARCHAR NOT NULL,
    copies_all BIGINT NOT NULL,
    finished BOOLEAN,
    cited_any BOOLEAN NOT NULL,
    quantitative BOOLEAN,
    cited BOOLEAN,
    validly_cited BOOLEAN,
    copies BIGINT NOT NULL,
    stored BIGINT NOT NULL,
    claims BIGINT,
    agent VARCHAR,
    one_agent BOOLEAN,
    study VARCHAR,
    one_study BOOLEAN
);

CREATE TABLE audit_findings_kept (
    rule VARCHAR NOT NULL,
    severity VARCHAR NOT NULL,
    result_key VARCHAR NOT NULL,
    task_id VARCHAR,
    message_id VARCHAR,
    context_id VARCHAR,
    artifact_id VARCHAR,
    part_index INTEGER,
    source_path VARCHAR,
    locator VARCHAR,
    detail VARCHAR,
    line BIGINT,
    reference VARCHAR
);

CREATE TABLE audit_quantities_kept (result_key VARCHAR NOT NULL, quantity VARCHAR NOT NULL);

CREATE TABLE audit_pending (result_key VARCHAR NOT NULL);

CREATE TABLE audit_quantities_pending (quantity VARCHAR NOT NULL);

INSERT INTO audit_pending SELECT DISTINCT result_key FROM results WHERE result_key IS NOT NULL;
