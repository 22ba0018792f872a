"""The archive's tables as typed rows: one SQLModel class per table, named after the table it types.

The schema itself is made only by the numbered SQL files in `migrations/`; `tests/test_schema.py`
checks that every table has its model and every model its table, column for column. The bulk
tables declare no PRIMARY KEY, UNIQUE or index in SQL (content-hash keys, batch anti-joins):
`primary_key=True` below only gives SQLAlchemy an identity. What a citation says is defined once,
by the domain `Citation` (`cite.citations`); `CitationRow` takes those columns from it.

Importing this module imports SQLModel (slow): import it where typed rows are wanted, not at start-up.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, get_type_hints

from sqlalchemy import JSON, BigInteger, Column, DateTime, LargeBinary, String
from sqlalchemy.types import ARRAY
from sqlmodel import Field, SQLModel

from ..cite.citations import CONTENT_FIELDS, Citation


def _json() -> Any:
    return Field(default=None, sa_column=Column(JSON))


def _strings() -> Any:
    return Field(default=None, sa_column=Column(ARRAY(String)))


def _moment(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable))


def _big(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(BigInteger, nullable=nullable))


class SchemaMigrationRow(SQLModel, table=True):
    __tablename__ = "schema_migrations"
    version: int = Field(primary_key=True)
    name: str
    applied_at: datetime | None = _moment()


class SchemaViewRow(SQLModel, table=True):
    """The definitions the archive's views were last made from (`store.views`)."""

    __tablename__ = "schema_views"
    fingerprint: str = Field(primary_key=True)
    made_at: datetime | None = _moment()


class SourceRow(SQLModel, table=True):
    """One version of one source file, recorded once its ingest committed."""

    __tablename__ = "sources"
    path: str = Field(primary_key=True)
    sha256: str = Field(primary_key=True)
    size: int | None = _big()
    container: str | None = None
    compression: str | None = None
    records: int | None = _big()
    quarantined: int | None = _big()
    recognised: int | None = _big()
    ingested_at: datetime | None = _moment()
    lineage: str | None = None
    """The first version of the chain of versions, each extending the one before, that this one ends."""
    alias_of: str | None = None
    """For a path holding bytes stored already at another path: that path (the alias adds nothing else)."""


class _IndexRow(SQLModel):
    """Every row of an index table names the source version (path and content hash) ingest read it from."""

    source_path: str
    source_sha256: str | None = None


class RecordRow(_IndexRow, table=True):
    """An input record stored byte-exact: a line, an SSE event, a JSON document or a database row."""

    __tablename__ = "records"
    record_id: str = Field(primary_key=True)
    seq: int | None = _big()
    locator: str
    line: int | None = _big()
    byte_offset: int | None = _big()
    kind: str
    sha256: str
    raw: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    """The record's bytes; NULL when they are stored in chunks (`raw_chunked`)."""
    raw_chunked: str | None = None
    """For a record longer than 30 KiB: the SHA-256 its chunks are stored under in `value_chunks`."""
    status: str
    reason: str | None = None
    """Why a record was quarantined; for an `ok` record that yields nothing, what was not understood."""
    yields: str | None = None
    """What an `ok` record yielded: `result`, a known non-result (`RECORD_YIELDS`), or `nothing`."""
    ingested_at: datetime | None = _moment()


class ResultRow(_IndexRow, table=True):
    """One stored copy of a result (a Task or a standalone agent Message) in one source file."""

    __tablename__ = "results"
    copy_id: str = Field(primary_key=True)
    result_key: str
    """The result's identity, the same in each of its stored copies."""
    kind: str
    task_id: str | None = None
    context_id: str | None = None
    message_id: str | None = None
    state: str | None = None
    terminal: bool
    timestamp: datetime | None = _moment()
    source_dir: str
    locator: str | None = None
    record_ids: list[str] | None = _strings()
    claims: int | None = None
    """Distinct claims (Part content, pointer) this copy holds."""
    origin: str | None = None
    """For an origin copy (read from a spool segment of `archiver record`): the spool directory."""


class _CopyRow(_IndexRow):
    """A row of what one stored copy of a result holds: its Parts, their citations and claims."""

    copy_id: str
    result_key: str


class PartRow(_CopyRow, table=True):
    """One Part of one stored copy, in the copy's order (`ordinal`)."""

    __tablename__ = "parts"
    part_id: str = Field(primary_key=True)
    ordinal: int
    part_index: int
    role: str
    location: str
    artifact_id: str | None = None
    artifact_name: str | None = None
    message_id: str | None = None
    kind: str
    media_type: str | None = None
    content_hash: str
    text: str | None = None
    data: dict | list | None = _json()
    file: dict | list | None = _json()
    metadata_: dict | None = Field(default=None, sa_column=Column("metadata", JSON))
    is_citation: bool
    text_chunked: str | None = None
    """For a text, data, file or metadata value longer than 30 KiB (NULL in its cell): the SHA-256 its chunks
    are stored under in `value_chunks`."""
    data_chunked: str | None = None
    file_chunked: str | None = None
    metadata_chunked: str | None = None


def _citation_content() -> type[SQLModel]:
    """The columns of what a citation says (study through extra), as the domain `Citation` types them."""
    hints = get_type_hints(Citation)
    namespace: dict[str, Any] = {"__module__": __name__, "__annotations__": {}}
    for name in CONTENT_FIELDS:
        kind = hints[name]
        if name == "extra":  # the domain holds its JSON text; the column is JSON
            kind, namespace[name] = dict | None, _json()
        elif kind == list[str]:
            kind, namespace[name] = list[str] | None, _strings()
        else:
            namespace[name] = None
        namespace["__annotations__"][name] = kind
    return type(SQLModel)("CitationContent", (_CopyRow,), namespace)


class CitationRow(_citation_content(), table=True):
    """One citation Part of one stored copy: what the citation says, checked against Citations v1."""

    __tablename__ = "citations"
    part_id: str = Field(primary_key=True)
    citation_hash: str
    valid: bool
    problems: list[str] | None = _strings()
    inferred: bool
    extra_chunked: str | None = None


class ClaimRow(_CopyRow, table=True):
    """One number a Part states, at its JSON pointer."""

    __tablename__ = "claims"
    part_id: str = Field(primary_key=True)
    pointer: str = Field(primary_key=True)
    value: float | None = None
    literal: str
    content_hash: str | None = None
    """The content hash of the claim's Part: with result_key and pointer, the claim's key."""
    unit: str | None = None
    """The unit of a number stated in a string ("%", "€", "kg"); None for a number leaf."""
    stated: str | None = None
    """The string a number was stated in ("35%"); None for a number leaf."""
    cell: str | None = None
    """The cell of the table the claim fills: its row's labels and its key ("18-34: share")."""


class AgentCardRow(_IndexRow, table=True):
    """An agent card read from a source: who the agent is, and whether it declares Citations v1."""

    __tablename__ = "agent_cards"
    card_id: str = Field(primary_key=True)
    name: str | None = None
    url: str | None = None
    declares_extension: bool
    lists_media_type: bool
    card: dict | None = _json()
    record_id: str
    source_dir: str
    card_chunked: str | None = None


class RpcErrorRow(_IndexRow, table=True):
    """A JSON-RPC or REST error response: no result, never an uncited one."""

    __tablename__ = "rpc_errors"
    record_id: str = Field(primary_key=True)
    rpc_id: str | None = None
    code: str | None = None
    message: str | None = None
    message_chunked: str | None = None


class ValueChunkRow(SQLModel, table=True):
    """One chunk of a value longer than 30 KiB, stored out of its cell (`archiver.store.chunks`): the
    value is its chunks in `seq` order, under the SHA-256 of the whole."""

    __tablename__ = "value_chunks"
    value_sha256: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    chunk: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class HealedRow(SQLModel, table=True):
    """Index rows that opening the archive for writing removed: written by no committed ingest."""

    __tablename__ = "healed"
    healed_at: datetime | None = _moment(nullable=False)
    table_name: str = Field(primary_key=True)
    source_path: str | None = None
    source_sha256: str | None = None
    rows: int = _big(nullable=False)


class VerdictRow(SQLModel, table=True):
    """One re-run of one citation of a result (`archiver verify`): reproduced, differs, partial or not-rerunnable."""

    __tablename__ = "verdicts"
    verified_at: datetime | None = _moment(nullable=False)
    run_id: str = Field(primary_key=True)
    result_key: str = Field(primary_key=True)
    citation_hash: str = Field(primary_key=True)
    verdict: str
    reason: str | None = None
    differences: list | None = _json()
    claims: int | None = None
    tolerance: float | None = None
    extractor: str | None = None
    extractor_version: str | None = None
    table_sha256: str | None = None
    fingerprint: str
    data_layer: str | None = None
    data_layer_sha256: str | None = None
    rows_used: str | None = None
    comparison: str | None = None
    absolute_tolerance: float | None = None
    coverage: str | None = None
    inputs: dict | None = _json()
    comparison_given: bool | None = None  # the comparison came from the command line, not the data layer


class VerifyRunRow(SQLModel, table=True):
    """An `archiver verify` run starting or finishing: a start without a finish is an interrupted run."""

    __tablename__ = "verify_runs"
    run_id: str = Field(primary_key=True)
    event: str = Field(primary_key=True)  # started | finished
    logged_at: datetime | None = _moment(nullable=False)
    data_layer: str | None = None


class ClaimIndexRow(SQLModel, table=True):
    """One claim counted once with its result's citation: a row of the kept claim index, equal to its
    definition (the view `claim_citations_derived`, `store.views`) for every result not pending."""

    __tablename__ = "claim_index"
    value: float | None = None
    literal: str
    unit: str | None = None
    stated: str | None = None
    cell: str | None = None
    pointer: str = Field(primary_key=True)
    part_index: int | None = None
    content_hash: str | None = None
    artifact_id: str | None = None
    message_id: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    agent: str | None = None
    timestamp: datetime | None = _moment()
    source_path: str
    source_sha256: str | None = None
    result_key: str = Field(primary_key=True)
    copy_id: str
    part_id: str = Field(primary_key=True)
    copies: int = _big(nullable=False)
    citation_hash: str | None = None
    study: str | None = None
    period: str | None = None
    fielded: str | None = None
    base_name: str | None = None
    base_n: float | None = None
    weight: str | None = None
    source_table: str | None = None
    source_column: str | None = None
    source_function: str | None = None
    warnings: list[str] | None = _strings()
    valid: bool | None = None
    problems: list[str] | None = _strings()
    inferred: bool | None = None


class ClaimIndexPendingRow(SQLModel, table=True):
    """A result whose claim index rows a write changed and a refresh has not yet made again (`store.kept`)."""

    __tablename__ = "claim_index_pending"
    result_key: str = Field(primary_key=True)


class AuditStatusKeptRow(SQLModel, table=True):
    """A result as the audit judges it (the temporary `audit_result_status` of an unfiltered audit), kept by the
    writes that change it (`audit.kept`): its copies, whether finished, quantitative, cited and validly cited,
    its claims, its agent and study when it has one, its agents and studies when it has several."""

    __tablename__ = "audit_status_kept"
    result_key: str = Field(primary_key=True)
    copies_all: int = _big(nullable=False)
    finished: bool | None = None
    cited_any: bool
    quantitative: bool | None = None
    cited: bool | None = None
    validly_cited: bool | None = None
    copies: int = _big(nullable=False)
    stored: int = _big(nullable=False)
    claims: int | None = _big()
    agent: str | None = None
    one_agent: bool | None = None
    study: str | None = None
    one_study: bool | None = None
    agents: list[str] | None = _strings()
    """Its copies' agents, where they are several (else NULL: `agent`)."""
    studies: list[str] | None = _strings()
    """The studies its citations name, where they are several (else NULL: `study`)."""


class AuditFindingsKeptRow(SQLModel, table=True):
    """A finding of a rule that judges one result from its own copies, kept by the writes that change it
    (`audit.kept`): what an unfiltered audit at the default minimum base reports of the result."""

    __tablename__ = "audit_findings_kept"
    rule: str = Field(primary_key=True)
    severity: str
    result_key: str = Field(primary_key=True)
    task_id: str | None = None
    message_id: str | None = None
    context_id: str | None = None
    artifact_id: str | None = None
    part_index: int | None = None
    source_path: str | None = None
    locator: str | None = None
    detail: str | None = None
    line: int | None = _big()
    reference: str | None = None
    agent: str | None = None  # of the first of its result's copies in its file: serve's pages filter by it
    timestamp: datetime | None = _moment()
    source_sha256: str | None = None


class AuditQuantitiesKeptRow(SQLModel, table=True):
    """A result resting on one valid citation, and the digest of its quantity (the citation's study, period, base,
    weight and source): what `conflicting-claims` compares its claims within (`audit.kept`)."""

    __tablename__ = "audit_quantities_kept"
    result_key: str = Field(primary_key=True)
    quantity: str


class AuditQuantitiesPendingRow(SQLModel, table=True):
    """A quantity whose results a refresh changed: its conflicting-claims findings are to be made again."""

    __tablename__ = "audit_quantities_pending"
    quantity: str = Field(primary_key=True)


class AuditPendingRow(SQLModel, table=True):
    """A result whose kept audit rows a write changed and a refresh has not yet made again (`audit.kept`)."""

    __tablename__ = "audit_pending"
    result_key: str = Field(primary_key=True)


class ResultCountsKeptRow(SQLModel, table=True):
    """What one result adds to one of the archive's counts (`store.counts`): `kind` (a count of `stats`, `tasks`,
    a subject, `day`), `name` (the task, subject or agent; else NULL), `day` (of `day` rows), `n`."""

    __tablename__ = "result_counts_kept"
    result_key: str = Field(primary_key=True)
    kind: str = Field(primary_key=True)
    name: str | None = None
    day: date | None = None
    n: int = _big(nullable=False)


class CountsKeptRow(SQLModel, table=True):
    """One of the archive's counts: the sum of what its results add to it (`store.counts`)."""

    __tablename__ = "counts_kept"
    kind: str = Field(primary_key=True)
    name: str | None = None
    day: date | None = None
    n: int = _big(nullable=False)


class CountsPendingRow(SQLModel, table=True):
    """A result whose kept counts a write changed and a refresh has not yet made again (`store.counts`)."""

    __tablename__ = "counts_pending"
    result_key: str = Field(primary_key=True)


class AuditSummaryKeptRow(SQLModel, table=True):
    """The sums of what every kept status adds to the audit summary's counts, overall (`kind` 'total'), per agent
    and per study (`store.audit_sums`): kept with the audit, equal to their definition over the statuses."""

    __tablename__ = "audit_summary_kept"
    kind: str = Field(primary_key=True)
    name: str | None = None
    results: int = _big(nullable=False)
    copies: int = _big(nullable=False)
    quantitative_results: int = _big(nullable=False)
    cited_results: int = _big(nullable=False)
    validly_cited_results: int = _big(nullable=False)
    claims: int = _big(nullable=False)


class CitedCellsKeptRow(SQLModel, table=True):
    """What the claim index's claims resting on one citation state in one cell and unit, of one agent's counted
    copies (`store.cells`): kept with the index, equal to its definition over the index."""

    __tablename__ = "cited_cells_kept"
    agent: str | None = None
    citation_hash: str = Field(primary_key=True)
    study: str | None = None
    period: str | None = None
    fielded: str | None = None
    source_table: str | None = None
    source_column: str | None = None
    source_function: str | None = None
    base_n: float | None = None
    valid: bool | None = None
    inferred: bool | None = None
    cell: str | None = None
    unit: str | None = None
    claims: int = _big(nullable=False)
    valued: int = _big(nullable=False)
    value_sum: float | None = None
    low: float | None = None
    high: float | None = None


ROWS: dict[str, type[SQLModel]] = {
    model.__tablename__: model
    for model in (
        SchemaMigrationRow,
        SchemaViewRow,
        SourceRow,
        RecordRow,
        ResultRow,
        PartRow,
        CitationRow,
        ClaimRow,
        AgentCardRow,
        RpcErrorRow,
        ValueChunkRow,
        HealedRow,
        VerdictRow,
        ClaimIndexRow,
        ClaimIndexPendingRow,
        VerifyRunRow,
        AuditStatusKeptRow,
        AuditFindingsKeptRow,
        AuditPendingRow,
        AuditQuantitiesKeptRow,
        AuditQuantitiesPendingRow,
        ResultCountsKeptRow,
        CountsKeptRow,
        CountsPendingRow,
        CitedCellsKeptRow,
        AuditSummaryKeptRow,
    )
}
"""Every table's typed row, by table name."""


def typed(model: type[SQLModel], cursor: Any) -> list[SQLModel]:
    """The rows of an executed cursor over `model`'s table as `model`s (JSON columns parsed)."""
    import orjson
    from sqlalchemy import inspect

    columns = {
        attribute.columns[0].name: (attribute.key, isinstance(attribute.columns[0].type, JSON))
        for attribute in inspect(model).mapper.column_attrs
    }
    fields = [columns[d[0]] for d in cursor.description]
    return [
        model(
            **{
                key: orjson.loads(value) if is_json and value is not None else value
                for (key, is_json), value in zip(fields, row, strict=True)
            }
        )
        for row in cursor.fetchall()
    ]
