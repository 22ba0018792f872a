"""The archive's tables as SQLModel models.

The schema itself is made only by the numbered SQL files in `migrations/`; a
test checks that the migrated schema matches these models. The bulk tables
declare no PRIMARY KEY, UNIQUE or index in SQL (content-hash keys, batch
anti-joins): `primary_key=True` below only gives SQLAlchemy an identity.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import JSON, BigInteger, Column, DateTime, LargeBinary, String
from sqlalchemy.types import ARRAY
from sqlmodel import Field, SQLModel


def _json(**kw) -> Field:
    return Field(default=None, sa_column=Column(JSON, **kw))


def _strings() -> Field:
    return Field(default=None, sa_column=Column(ARRAY(String)))


def _moment() -> Field:
    return Field(default=None, sa_column=Column(DateTime(timezone=True)))


def _big() -> Field:
    return Field(default=None, sa_column=Column(BigInteger))


class SchemaMigration(SQLModel, table=True):
    __tablename__ = "schema_migrations"
    version: int = Field(primary_key=True)
    name: str
    applied_at: datetime | None = _moment()


class Source(SQLModel, table=True):
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


class RawRecord(SQLModel, table=True):
    """An input record stored byte-exact: a line, an SSE event, a JSON document or a database row."""

    __tablename__ = "records"
    record_id: str = Field(primary_key=True)
    source_path: str
    seq: int | None = _big()
    locator: str
    line: int | None = _big()
    byte_offset: int | None = _big()
    kind: str
    sha256: str
    raw: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    status: str
    reason: str | None = None
    ingested_at: datetime | None = _moment()
    source_sha256: str | None = None


class StoredCopy(SQLModel, table=True):
    """One stored copy of a result (a Task or a standalone agent Message) in one source file."""

    __tablename__ = "results"
    copy_id: str = Field(primary_key=True)
    result_key: str
    kind: str
    task_id: str | None = None
    context_id: str | None = None
    message_id: str | None = None
    state: str | None = None
    terminal: bool
    timestamp: datetime | None = _moment()
    source_path: str
    source_dir: str
    locator: str | None = None
    record_ids: list[str] | None = _strings()
    claims: int | None = None
    """Distinct claims (Part content, pointer) this copy holds."""
    source_sha256: str | None = None


class IndexedPart(SQLModel, table=True):
    __tablename__ = "parts"
    part_id: str = Field(primary_key=True)
    copy_id: str
    result_key: str
    source_path: str
    role: str
    location: str
    artifact_id: str | None = None
    artifact_name: str | None = None
    message_id: str | None = None
    part_index: int
    ordinal: int
    kind: str
    media_type: str | None = None
    content_hash: str
    text: str | None = None
    data: dict | list | None = _json()
    file: dict | list | None = _json()
    metadata_: dict | None = Field(default=None, sa_column=Column("metadata", JSON))
    is_citation: bool
    source_sha256: str | None = None


class Citation(SQLModel, table=True):
    __tablename__ = "citations"
    part_id: str = Field(primary_key=True)
    copy_id: str
    result_key: str
    source_path: str
    citation_hash: str
    study: str | None = None
    period: str | None = None
    fielded: str | None = None
    fielded_start: date | None = None
    fielded_end: date | None = None
    base_name: str | None = None
    base_n: float | None = None
    weight: str | None = None
    source_table: str | None = None
    source_column: str | None = None
    source_function: str | None = None
    warnings: list[str] | None = _strings()
    extra: dict | None = _json()
    valid: bool
    problems: list[str] | None = _strings()
    inferred: bool
    source_sha256: str | None = None


class Claim(SQLModel, table=True):
    __tablename__ = "claims"
    part_id: str = Field(primary_key=True)
    pointer: str = Field(primary_key=True)
    copy_id: str
    result_key: str
    source_path: str
    value: float | None = None
    literal: str
    content_hash: str | None = None
    """The content hash of the claim's Part: with result_key and pointer, the claim's key."""
    source_sha256: str | None = None


class AgentCard(SQLModel, table=True):
    __tablename__ = "agent_cards"
    card_id: str = Field(primary_key=True)
    source_path: str
    source_dir: str
    record_id: str
    name: str | None = None
    url: str | None = None
    declares_extension: bool
    lists_media_type: bool
    card: dict | None = _json()
    source_sha256: str | None = None


class RpcError(SQLModel, table=True):
    """A JSON-RPC or REST error response: no result, never an uncited one."""

    __tablename__ = "rpc_errors"
    record_id: str = Field(primary_key=True)
    source_path: str
    rpc_id: str | None = None
    code: str | None = None
    message: str | None = None
    source_sha256: str | None = None


class Healed(SQLModel, table=True):
    """Index rows that opening the archive for writing removed: written by no committed ingest."""

    __tablename__ = "healed"
    healed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=False))
    table_name: str = Field(primary_key=True)
    source_path: str | None = None
    source_sha256: str | None = None
    rows: int = Field(sa_column=Column(BigInteger, nullable=False))


BULK_TABLES = (RawRecord, StoredCopy, IndexedPart, Citation, Claim, AgentCard, RpcError)


class Verdict(SQLModel, table=True):
    """One re-run of one citation of a result (`archiver verify`): reproduced, differs or not-rerunnable."""

    __tablename__ = "verdicts"
    verified_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=False))
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


BULK_TABLES = (*BULK_TABLES, Verdict, Healed)
