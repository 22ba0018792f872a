-- Numbers stated in strings are claims ("35%", "€1,250.50", "$3.5m": archiver/core/src/cite/stated.rs),
-- with their `unit` and the string as written (`stated`), both NULL for a number leaf; and every claim
-- carries the cell of the table it fills (`cell`: its row's labels and its key, "18-34: share";
-- archiver/core/src/cite/claims.rs), which the audit's conflicting-claims compares. Ingest fills all three;
-- for the claims of archives made before, `archiver/store/migrations.py` re-reads every agent's data Part
-- that is not a citation with the core, in this migration's transaction.
ALTER TABLE claims ADD COLUMN unit VARCHAR;
ALTER TABLE claims ADD COLUMN stated VARCHAR;
ALTER TABLE claims ADD COLUMN cell VARCHAR;
