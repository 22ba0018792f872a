"""Prepare source files for the writer: the compiled core (`archiver._core`) reads their records,
understands them, applies the Citations v1 rules and hands over Arrow batches; this module says what
each file is to the core and keeps the batches for the writer.

A file is streamed: the core hands over its rows a batch at a time (to a spool, which moves them to a
temporary file past a few MiB), and keeps only recent tasks of its assembly in memory; memory is
bounded by the largest record, not by the size of the file. Consecutive small files are prepared
together, their rows sharing one batch per table.

This is what ingest's worker processes run, so it imports no DuckDB (each worker would carry it in
memory for nothing).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pyarrow as pa

from ._core import index_files
from .load.spool import Spool
from .read import containers
from .read.containers import SourceFile, is_sqlite, sqlite_rows, store_rows
from .read.version import SourceVersion
from .workers import read_reporter, stop_if_cancelled

if TYPE_CHECKING:  # the boundary's types (`_core.pyi`): checked, not imported
    from ._core._core import FileSpec, Outcome


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
        return self.tables.largest

    def discard(self) -> None:
        """Let the batches go (their temporary file, for a large file) once the writer is done with them."""
        self.tables.discard()


REPORT_SECONDS = 0.2
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def prepare(files: list[tuple[SourceFile, SourceVersion]], schemas: dict) -> list[PreparedFile]:
    """Read, understand and index source files (runs in a worker process): one file streamed, several
    (small) files each read whole, their rows batched together in one spool that they share.

    A file the core cannot prepare is quarantined whole, kept as one record: one file's surprise never
    stops the others from being stored.
    """
    start = round(datetime.now(UTC).timestamp() * 1_000_000)
    moments = [start + number for number in range(len(files))]  # one a file: the archive keeps their order
    specs: list[FileSpec] = [
        {**_spec(*file), "ingested_at_us": moment} for file, moment in zip(files, moments, strict=True)
    ]
    index = index_files(
        specs,
        schemas,
        start,
        containers.RECORD_LIMIT,
        containers.GZIP_LIMIT,
        containers.GZIP_RATIO,
    )
    spool = Spool()
    try:
        with _reporting(index, sum(version.size for _, version in files)):
            for name, batch in index:
                stop_if_cancelled()
                if name is None:  # what came before is void: the core made it again
                    spool.discard()
                    spool = Spool()
                else:
                    spool.add(name, pa.Table.from_batches([pa.record_batch(batch)]))
                del batch  # a huge record's batch goes (to the spool's file) before the core makes the next
    except BaseException:
        spool.discard()
        raise
    spool.share(len(files))
    return [
        _prepared(source, version, outcome, spool, EPOCH + timedelta(microseconds=moment))
        for (source, version), outcome, moment in zip(files, index.outcomes(), moments, strict=True)
    ]


def _spec(source: SourceFile, version: SourceVersion) -> FileSpec:
    """What the core is told of one file: where its bytes are (or its rows, for a task store), and its version."""
    spec: FileSpec = {"path": version.path, "key": version.key, "sha256": version.sha256, "size": version.size}
    if source.unreadable is not None:
        return {**spec, "unreadable": source.unreadable}
    if source.data is not None:
        spec["data"] = source.data
    else:
        spec["open"] = os.fsencode(source.fs_path)
    if source.store is not None:
        return {**spec, "container": source.store.kind, "rows": store_rows(source.data or b"", source.store)}
    if source.data is None and is_sqlite(source):
        try:
            return {**spec, "container": "sqlite", "rows": sqlite_rows(source)}
        except sqlite3.DatabaseError as exc:
            return {**spec, "container": "sqlite", "refused": f"SQLite file is not a readable task store: {exc}"}
        except OSError:  # gone since it was fingerprinted: the core says why
            pass
    return spec


@contextmanager
def _reporting(index, size: int) -> Iterator[None]:
    """While the core reads (the GIL released), report how far it is a few times a second."""
    done = threading.Event()
    report_read = read_reporter()

    def report() -> None:
        while not done.wait(REPORT_SECONDS):
            report_read(min(index.bytes_read, size), index.records_read)

    reporter = threading.Thread(target=report, name="archiver-progress", daemon=True)
    reporter.start()
    try:
        yield
    finally:
        done.set()
        reporter.join()
    report_read(size, index.records_read)


def _prepared(
    source: SourceFile, version: SourceVersion, outcome: Outcome, spool: Spool, now: datetime
) -> PreparedFile:
    found = FileOutcome(
        source.path,
        container=outcome["container"],
        records=outcome["records"],
        quarantined=outcome["quarantined"],
        recognised=outcome["recognised"],
        problems=list(outcome["problems"]),
    )
    source_row = {
        "path": source.path,
        "sha256": version.sha256,
        "size": version.size,
        "container": outcome["container"],
        "compression": outcome["compression"],
        "records": found.records,
        "quarantined": found.quarantined,
        "recognised": found.recognised,
        "ingested_at": now,
        "lineage": version.lineage,
        "alias_of": None,
    }
    return PreparedFile(found, spool, source_row, version)
