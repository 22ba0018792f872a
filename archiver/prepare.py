"""Prepare one source file for the writer: read its records, understand them, apply the Citations v1
rules and turn its rows into Arrow batches.

This is what ingest's worker processes run, so it imports no DuckDB (each worker would carry it in
memory for nothing).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import orjson

from .load.rows import FileRows
from .read.containers import SourceFile, read_records
from .read.decode import decode
from .read.records import Record
from .read.version import SourceVersion
from .understand.assemble import FileAssembly
from .understand.dialects import NotUnderstood, events_of, task_of_store_row


@dataclass
class FileOutcome:
    path: str
    container: str | None = None
    records: int = 0
    new_records: int = 0
    quarantined: int = 0
    recognised: int = 0
    unchanged: bool = False
    problems: list[str] = field(default_factory=list)
    alias_of: str | None = None
    """The path at which the archive holds these bytes already (this path is recorded as an alias)."""
    elsewhere: str | None = None
    """Why another writer of the same lake has this file (it holds the claim, or stored it first)."""


def index_file(source: SourceFile, version: SourceVersion, records: Iterator[Record], now: datetime
               ) -> tuple[FileRows, FileOutcome]:
    """Understand every record of one source; the rows it contributes and what happened."""
    rows = FileRows(version, now)
    outcome = FileOutcome(source.path)
    assembly = FileAssembly()
    for record in records:
        raw_sha256 = hashlib.sha256(record.raw).hexdigest()
        record_id = rows.record_id(record, raw_sha256)
        if record.kind == "filler":
            rows.add_record(record, record_id, raw_sha256, "filler", None)
            continue
        outcome.records += 1
        try:
            if record.kind == "unreadable":
                raise NotUnderstood(record.error)
            value = record.value if record.kind == "row" else decode(record.payload)
            events = [task_of_store_row(value)] if record.kind == "row" else events_of(value)
            rpc_id = value.get("id") if isinstance(value, dict) and "jsonrpc" in value else None
            assembly.add(record_id, rpc_id, events)
        except (ValueError, RecursionError, TypeError) as exc:
            reason = _one_line(exc)
            rows.add_record(record, record_id, raw_sha256, "quarantined", reason)
            outcome.quarantined += 1
            outcome.problems.append(f"{source.path}: {record.locator}: {reason}")
            continue
        rows.add_record(record, record_id, raw_sha256, "ok", None)
        outcome.recognised += 1
    rows.add_assembly(assembly)
    return rows, outcome


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, orjson.JSONDecodeError) or type(exc) is json.JSONDecodeError:
        text = f"invalid JSON: {text}"
    return text[:300]


@dataclass
class PreparedFile:
    """What a worker hands the writer for one source file: its outcome and its Arrow batches."""

    outcome: FileOutcome
    tables: list
    source_row: dict
    version: SourceVersion


def prepare(source: SourceFile, version: SourceVersion, schemas: dict) -> PreparedFile:
    """Read, understand and index one source file (runs in a worker process)."""
    now = datetime.now(UTC)
    container, compression, records = read_records(source)
    rows, outcome = index_file(source, version, records, now)
    outcome.container = container
    return PreparedFile(outcome, list(rows.tables(schemas)), {
        "path": source.path, "sha256": version.sha256, "size": version.size, "container": container,
        "compression": compression, "records": outcome.records, "quarantined": outcome.quarantined,
        "recognised": outcome.recognised, "ingested_at": now, "lineage": version.lineage, "alias_of": None,
    }, version)
