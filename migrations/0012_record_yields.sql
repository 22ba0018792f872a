-- What each record yielded once read (archiver/core/src/understand/yields.rs): `result` (it joined a stored
-- copy), a known non-result (`status`, `user-message`, `request`, `agent-card`, `push-config`, `error`,
-- `empty`), or `nothing`, with what was not understood in `reason`; the audit's `unrecognised-record` names
-- those. NULL for quarantined and filler records, and for records ingested before this column.
ALTER TABLE records ADD COLUMN yields VARCHAR;
