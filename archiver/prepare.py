"""Prepare one source file for the writer: read its records, understand them, apply the Citations v1
rules and turn its rows into Arrow batches.

A file is streamed: its records are read one at a time, its rows handed to a spool a batch at a
time, and its assembly keeps only recent tasks in memory; memory is bounded by the largest record,
not by the size of the file.

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
from .load.spool import Spool
from .read.containers import SourceFile, read_records
from .read.decode import decode
from .read.records import Record
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
    elsewhere: str | None = None
    """Why another writer of the same lake has this file (it holds the claim, or stored it first)."""


def index_file(source: SourceFile, sha256: str, records: Iterator[Record], now: datetime,
               spool: Spool | None = None, schemas: dict | None = None) -> tuple[FileRows, FileOutcome]:
    """Understand every record of one source; the rows it contributes (handed to `spool` as they
    come, when there is one) and what happened."""
    rows = FileRows(source.path, sha256, now, spool, schemas)
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
            assembly.add(record_id, rpc_id, events, record.locator, len(record.raw))
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
    """What a worker hands the writer for one source file: its outcome and its Arrow batches
    (`tables`: (table name, Arrow table) pairs, iterable again and again, several per table for
    a large file; `largest`: bytes of the largest)."""

    outcome: FileOutcome
    tables: Spool
    source_row: dict

    @property
    def largest(self) -> int:
        if isinstance(self.tables, Spool):
            return self.tables.largest
        return max((table.nbytes for _, table in self.tables), default=0)

    def discard(self) -> None:
        """Let the batches go (their temporary file, for a large file) once the writer is done with them."""
        if isinstance(self.tables, Spool):
            self.tables.discard()


def prepare(source: SourceFile, sha256: str, size: int, schemas: dict) -> PreparedFile:
    """Read, understand and index one source file (runs in a worker process)."""
    now = datetime.now(UTC)
    container, compression, records = read_records(source)
    spool = Spool()
    try:
        rows, outcome = index_file(source, sha256, records, now, spool, schemas)
        rows.hand_over()
    except BaseException:
        spool.discard()
        raise
    outcome.container = container
    return PreparedFile(outcome, spool, {
        "path": source.path, "sha256": sha256, "size": size, "container": container,
        "compression": compression, "records": outcome.records, "quarantined": outcome.quarantined,
        "recognised": outcome.recognised, "ingested_at": now,
    })
