"""The index's tables as ingest writes them, named once (this module imports nothing: every command
that opens an archive reaches it)."""

INDEX_TABLES = ("records", "results", "parts", "citations", "claims", "agent_cards", "rpc_errors")
"""The tables ingest writes, raw records first; every row names its source version (`source_path`,
`source_sha256`)."""

UNCOMMITTED = """NOT EXISTS (SELECT 1 FROM sources s WHERE s.path = t.source_path AND s.sha256 = t.source_sha256
                 AND s.alias_of IS NULL)"""
"""Of an index row `t`: no committed `sources` row records its version (the `sources` rows of a commit
group are written last, so such a row was written by no committed ingest)."""
