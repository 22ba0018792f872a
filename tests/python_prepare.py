"""The Python path the compiled core replaced (`archiver/prepare.py` before `archiver._core.index_files`),
kept verbatim as the reference of the differential tests (`tests/test_core_index.py`): what the core must
give, table by table and byte for byte. Nothing but those tests uses it."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from archiver.load.rows import FileRows
from archiver.load.spool import Spool
from archiver.read.containers import SourceFile, read_records, whole_file
from archiver.read.decode import decode, nesting_depth
from archiver.read.records import Record
from archiver.read.segments import SEGMENTS
from archiver.read.version import SourceVersion
from archiver.understand.assemble import FileAssembly
from archiver.understand.dialects import NotUnderstoodError, task_of_store_row
from archiver.understand.events import events_of
from archiver.understand.recorded import is_envelope, recorded_events
from archiver.workers import report_read


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


def index_file(
    source: SourceFile,
    version: SourceVersion,
    records: Iterator[Record],
    now: datetime,
    spool: Spool | None = None,
    schemas: dict | None = None,
    origin: str | None = None,
) -> tuple[FileRows, FileOutcome]:
    """Understand every record of one source; the rows it contributes (handed to `spool` as they
    come, when there is one) and what happened. `origin`: the spool directory of a spool segment, whose
    copies are origin copies."""
    rows = FileRows(version, now, spool, schemas, origin)
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
            rpc_id, events = _events(record)
            assembly.add(record_id, rpc_id, events, record.locator, len(record.raw))
        except (ValueError, RecursionError, TypeError) as exc:
            _quarantine(rows, outcome, record, raw_sha256, _one_line(exc))
            continue
        rows.add_record(record, record_id, raw_sha256, "ok", None)
        outcome.recognised += 1
    rows.add_assembly(assembly)
    return rows, outcome


def _quarantine(rows: FileRows, outcome: FileOutcome, record: Record, raw_sha256: str, reason: str) -> None:
    rows.add_record(record, rows.record_id(record, raw_sha256), raw_sha256, "quarantined", reason)
    outcome.quarantined += 1
    outcome.problems.append(f"{outcome.path}: {record.locator}: {reason}")


def _events(record: Record) -> tuple[Any, list]:
    """The JSON-RPC id and the A2A events of one record; ValueError when it holds none, whatever failed
    (this touches nothing shared yet, so the record alone is refused)."""
    if record.kind == "unreadable":
        raise NotUnderstoodError(record.error)
    try:
        if record.envelope is not None:
            return _recorded(record)
        value = record.value if record.kind == "row" else decode(record.payload)
        if is_envelope(value):
            return recorded_events(value)
        events = [task_of_store_row(value)] if record.kind == "row" else events_of(value)
    except RecursionError:
        raise NotUnderstoodError(f"JSON nested too deeply ({_depth(record)} levels)") from None
    except (ValueError, TypeError):
        raise
    except Exception as exc:
        raise NotUnderstoodError(_one_line(exc)) from exc
    return (value.get("id") if isinstance(value, dict) and "jsonrpc" in value else None), events


def _recorded(record: Record) -> tuple[Any, list]:
    """The exchange id and the events of a stream segment's record: its envelope and the event after it."""
    try:
        envelope = decode(record.envelope)
    except ValueError as exc:
        raise NotUnderstoodError(f"a2a-record envelope: {_one_line(exc)}") from None
    return recorded_events(envelope, decode(record.payload) if record.payload is not None else None)


def _depth(record: Record) -> int:
    """How deep a record's JSON nests; a task-store row's, as deep as its deepest JSON column."""
    if record.kind == "row":
        return max((nesting_depth(cell.encode()) for cell in record.value.values() if isinstance(cell, str)), default=0)
    return nesting_depth(record.payload)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, orjson.JSONDecodeError) or type(exc) is json.JSONDecodeError:
        text = f"invalid JSON: {text}"
    elif not isinstance(exc, (ValueError, TypeError)):
        text = f"internal error ({type(exc).__name__}: {text})"
    return text[:300]


def _quarantined_whole(
    source: SourceFile, version: SourceVersion, now: datetime, reason: str, spool: Spool | None, schemas: dict
) -> tuple[FileRows, FileOutcome]:
    """The rows of a file quarantined whole, made without the readers and assembly that failed on it."""
    rows, outcome = FileRows(version, now, spool, schemas), FileOutcome(source.path, records=1)
    record = whole_file(source, reason)
    _quarantine(rows, outcome, record, hashlib.sha256(record.raw).hexdigest(), reason)
    return rows, outcome


@dataclass
class PreparedFile:
    """What a worker hands the writer for one source file: its outcome and its Arrow batches
    (`tables`: (table name, Arrow table) pairs, iterable again and again, several per table for
    a large file; `largest`: bytes of the largest)."""

    outcome: FileOutcome
    tables: Spool
    source_row: dict
    version: SourceVersion

    @property
    def largest(self) -> int:
        if isinstance(self.tables, Spool):
            return self.tables.largest
        return max((table.nbytes for _, table in self.tables), default=0)

    def discard(self) -> None:
        """Let the batches go (their temporary file, for a large file) once the writer is done with them."""
        if isinstance(self.tables, Spool):
            self.tables.discard()


REPORT_SECONDS = 0.2


def _reported(records: Iterator[Record], size: int, before: tuple[int, int] = (0, 0)) -> Iterator[Record]:
    """The records, reporting how far into the file they are (a few times a second, and the whole once
    read), after the bytes and records `before` it (of the files prepared with it)."""
    report_read(*before)
    due = time.monotonic() + REPORT_SECONDS
    count = 0  # as `index_file` counts them: fillers are not records
    for record in records:
        if record.byte_offset and (now := time.monotonic()) >= due:
            report_read(before[0] + min(record.byte_offset, size), before[1] + count)
            due = now + REPORT_SECONDS
        count += record.kind != "filler"
        yield record
    report_read(before[0] + size, before[1] + count)


def prepare(files: list[tuple[SourceFile, SourceVersion]], schemas: dict) -> list[PreparedFile]:
    """Read, understand and index source files (runs in a worker process): one file streamed, its rows
    handed to its spool a batch at a time; several (small) files each read whole, their rows batched
    together in one spool that they share.

    An exception no record caught quarantines the file, kept whole as one record: one file's
    surprise never stops the others from being stored.
    """
    if len(files) == 1:
        return [_indexed(*files[0], Spool(), schemas)[1]]
    spool = Spool()
    together = FileRows(None, None, spool, schemas)
    prepared, read = [], (0, 0)
    try:
        for source, version in files:
            rows, one = _indexed(source, version, None, schemas, read)
            together.absorb(rows)
            prepared.append(one)
            read = (read[0] + version.size, read[1] + one.outcome.records)
        together.hand_over()
    except Exception:  # rows that become no Arrow batch: each file alone, so that only the file at fault is lost
        spool.discard()
        return [one for item in files for one in prepare([item], schemas)]
    except BaseException:
        spool.discard()
        raise
    spool.share(len(files))
    for one in prepared:
        one.tables = spool
    return prepared


def _indexed(
    source: SourceFile, version: SourceVersion, spool: Spool | None, schemas: dict, read: tuple[int, int] = (0, 0)
) -> tuple[FileRows, PreparedFile]:
    """The rows of one file (handed to `spool` as they come, when there is one), and the file prepared
    with `spool` as its batches."""
    now = datetime.now(UTC)
    try:
        container, compression, records = read_records(source)
        origin = os.path.dirname(source.path) if container in SEGMENTS else None
        rows, outcome = index_file(source, version, _reported(records, version.size, read), now, spool, schemas, origin)
        if spool is not None:
            rows.hand_over()
    except Exception as exc:
        if spool is not None:
            spool.discard()
            spool = Spool()
        container, compression = "unreadable", None
        reason = f"the file could not be prepared: {_one_line(exc)}"
        rows, outcome = _quarantined_whole(source, version, now, reason, spool, schemas)
        if spool is not None:
            rows.hand_over()
    except BaseException:
        if spool is not None:
            spool.discard()
        raise
    outcome.container = container
    source_row = {
        "path": source.path,
        "sha256": version.sha256,
        "size": version.size,
        "container": container,
        "compression": compression,
        "records": outcome.records,
        "quarantined": outcome.quarantined,
        "recognised": outcome.recognised,
        "ingested_at": now,
        "lineage": version.lineage,
        "alias_of": None,
    }
    return rows, PreparedFile(outcome, spool, source_row, version)
