-- The audit summary's counts kept (archiver/store/audit_sums.py), as the kept audit (0016) and counts (0017) are:
-- results, copies, quantitative, cited and validly cited results and claims, overall, per agent and per study,
-- the sums of what each kept status adds, which a refresh of the kept audit changes by what it changed. A status
-- now lists the agents (and studies) of a result that has several, and counts the claims of a result stored more
-- than once once each: the results with several are made again. The sums are made from the kept statuses after
-- this file, in its transaction (`store.audit_sums.rebuild`, `migrations.AFTER`).
ALTER TABLE audit_status_kept ADD COLUMN agents VARCHAR[];
ALTER TABLE audit_status_kept ADD COLUMN studies VARCHAR[];

CREATE TABLE audit_summary_kept (
    kind VARCHAR NOT NULL,
    name VARCHAR,
    results BIGINT NOT NULL,
    copies BIGINT NOT NULL,
    quantitative_results BIGINT NOT NULL,
    cited_results BIGINT NOT NULL,
    validly_cited_results BIGINT NOT NULL,
    claims BIGINT NOT NULL
);

INSERT INTO audit_pending
SELECT result_key FROM audit_status_kept WHERE NOT one_agent OR NOT one_study OR stored > 1;
