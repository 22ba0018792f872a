"""The index's tables as ingest writes them, named once (this module imports only the core, which names what
it writes: every command that opens an archive reaches it)."""

from .._core import INDEX_TABLES as _INDEX_TABLES
from .._core import RECORD_YIELDS as _RECORD_YIELDS

INDEX_TABLES: tuple[str, ...] = tuple(_INDEX_TABLES)
"""The tables ingest writes, raw records first (named by the core, which makes their batches); every row names
its source version (`source_path`, `source_sha256`)."""

RECORD_YIELDS: tuple[str, ...] = tuple(_RECORD_YIELDS)
"""What an `ok` record yielded once read (`records.yields`, named by the core's `understand/yields.rs`): a
result, a known non-result (a status-only event, a user's own message, a request, an agent card, a push
configuration, an error response, an empty answer), or nothing, what was not understood in its `reason`."""

UNCOMMITTED = """NOT EXISTS (SELECT 1 FROM sources s WHERE s.path = t.source_path AND s.sha256 = t.source_sha256
                 AND s.alias_of IS NULL)"""
"""Of an index row `t`: no committed `sources` row records its version (the `sources` rows of a commit
group are written last, so such a row was written by no committed ingest)."""

UNANCHORED = {
    "parts": "NOT EXISTS (SELECT 1 FROM results r WHERE r.copy_id = t.copy_id)",
    "citations": """NOT EXISTS (SELECT 1 FROM parts p WHERE p.part_id = t.part_id AND p.copy_id = t.copy_id
                     AND p.is_citation)""",
    "claims": """NOT EXISTS (SELECT 1 FROM parts p WHERE p.part_id = t.part_id AND p.copy_id = t.copy_id
                  AND NOT p.is_citation)""",
}
"""Of a row `t` of each table: what it hangs on is not indexed (a Part's stored copy; a citation's or a
claim's Part in the same copy). Ingest writes them together, so such a row was written by no committed
ingest either, whatever version it names (archives made before the commit marker gave the rows of a
killed ingest their path's latest version, migration 0007). In the order they are removed: parts first."""

CLAIM_INDEX = "claim_index"
CLAIM_INDEX_PENDING = "claim_index_pending"
"""The kept claim index and the keys of the results whose rows in it are to be made again (migration 0015,
`store.kept`)."""

CLAIM_INDEX_COLUMNS = (
    "value", "literal", "unit", "stated", "cell", "pointer", "part_index", "content_hash", "artifact_id",
    "message_id", "task_id", "context_id", "agent", "timestamp", "source_path", "source_sha256", "result_key",
    "copy_id", "part_id", "copies", "citation_hash", "study", "period", "fielded", "base_name", "base_n", "weight",
    "source_table", "source_column", "source_function", "warnings", "valid", "problems", "inferred",
)  # fmt: skip
"""The claim index's columns in its definition's order (`views.claim_citations`, the order `claim_citations`
shows): a DuckDB file stores `task_id` first (migration 0018, `store.kept.index_by_task`), so the index is read
by name, never by position."""

CLAIM_INDEX_BY_TASK = "claim_index_task"
"""The ART index of a DuckDB file's claim index on `task_id` (migration 0018): one task's claims found without a
scan of every claim."""

AUDIT_STATUS = "audit_status_kept"
AUDIT_FINDINGS = "audit_findings_kept"
AUDIT_PENDING = "audit_pending"
AUDIT_QUANTITIES = "audit_quantities_kept"
AUDIT_QUANTITIES_PENDING = "audit_quantities_pending"
"""The kept audit (each result's status, its findings, its quantity), the keys of the results whose rows in it
are to be made again, and the quantities whose conflicting-claims findings are (migration 0016, `audit.kept`)."""

AUDIT_SUMS = "audit_summary_kept"
"""The audit summary's counts (results, quantitative, validly cited; overall, per agent and per study), the sums of
what each kept status adds to them (migration 0020, `store.audit_sums`)."""

CITED_CELLS = "cited_cells_kept"
"""What the claim index's claims state per agent, citation, cell and unit, kept with the index (migration 0019,
`store.cells`)."""

RESULT_COUNTS = "result_counts_kept"
COUNTS = "counts_kept"
COUNTS_PENDING = "counts_pending"
"""The archive's counts kept by the writes: what each result adds to each, their sums, and the keys of the results
whose rows are to be made again (migration 0017, `store.counts`)."""

PENDING_TABLES = (CLAIM_INDEX_PENDING, AUDIT_PENDING, COUNTS_PENDING)
"""Where a write that touches a result marks it pending (`store.kept.touch`): each kept table's own list, emptied
by its own refresh."""

CHUNKS_TABLE = "value_chunks"
"""Where values too large to keep in their cells are stored, in chunks (migration 0011, `store.chunks`)."""

CHUNKED_COLUMNS = {
    "records": ("raw",),
    "parts": ("text", "data", "file", "metadata"),
    "citations": ("extra",),
    "agent_cards": ("card",),
    "rpc_errors": ("message",),
}
"""The columns whose values past `CHUNK_BYTES` are stored in `value_chunks`: the cell is NULL and its
`<column>_chunked` names the value's SHA-256."""

CHUNK_BYTES = 30 * 1024
"""The longest value kept in its cell, and the size of each chunk of a longer one: DuckDB keeps values of
about 64 kB and more pinned in memory until a checkpoint, and 256 MB of them failed a commit."""


def chunked(column: str) -> str:
    """The column naming the SHA-256 of `column`'s value when it is stored in chunks."""
    return f"{column}_chunked"
