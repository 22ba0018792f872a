"""Write source files' rows: each file lands whole or not at all.

Several files may share one transaction (a commit costs an fsync and may checkpoint), but a file
is never split across transactions; if a shared transaction fails, its files are written again one
transaction each, so only the file at fault is lost to the error.

On a lake that several writers share, a commit may conflict with another writer's (DuckLake checks
at commit, the catalog database may be busy): the transaction is retried with exponential backoff.
"""
from __future__ import annotations

import random
import re
import time
from collections import defaultdict
from collections.abc import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ..store.migrations import rollback
from ..store.params import STRINGS, strings
from .rows import INDEX_TABLES

DERIVED = INDEX_TABLES[1:]
SOURCE_COLUMNS = ("path", "sha256", "size", "container", "compression", "records", "quarantined", "recognised",
                  "ingested_at")


COMMIT_ATTEMPTS = 10
BACKOFF_SECONDS = 0.05
BACKOFF_MAX_SECONDS = 5.0
_CONFLICT = re.compile(r"conflict|database is locked|busy|could not serialize|deadlock|"
                       r"duplicate key value violates unique constraint \"ducklake_", re.IGNORECASE)


class CommitConflict(RuntimeError):
    """A commit still conflicted with other writers after every retry; nothing of its files was stored."""


def write_files(con: duckdb.DuckDBPyConnection, files: list,
                on_retry: Callable[[Exception], None] | None = None) -> list[int | None]:
    """Write prepared files (each with `.tables` and `.source_row`) in one transaction; returns how
    many (non-filler) records each added, or None for a file version that another writer stored
    first. Falls back to one transaction per file on failure; `on_retry` hears of each commit retry."""
    if len(files) > 1:
        try:
            return _retried(con, files, on_retry)
        except duckdb.Error:
            pass
    return [count for prepared in files for count in _retried(con, [prepared], on_retry)]


def is_conflict(exc: Exception) -> bool:
    return isinstance(exc, duckdb.TransactionException) or bool(_CONFLICT.search(str(exc)))


def _retried(con: duckdb.DuckDBPyConnection, files: list, on_retry: Callable | None) -> list[int | None]:
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            return _transaction(con, files)
        except duckdb.Error as exc:
            if not is_conflict(exc):
                raise
            if attempt == COMMIT_ATTEMPTS - 1:
                paths = ", ".join(prepared.source_row["path"] for prepared in files)
                raise CommitConflict(f"commit conflicted {COMMIT_ATTEMPTS} times, nothing stored of: {paths}; "
                                     f"ingest again (last error: {' '.join(str(exc).split())})") from exc
            if on_retry:
                on_retry(exc)
            time.sleep(min(BACKOFF_MAX_SECONDS, BACKOFF_SECONDS * 2**attempt) * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable")


def _transaction(con: duckdb.DuckDBPyConnection, files: list) -> list[int | None]:
    con.execute("BEGIN TRANSACTION")
    try:
        counts = _write(con, files)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return counts


def _write(con: duckdb.DuckDBPyConnection, files: list) -> list[int | None]:
    paths = [prepared.source_row["path"] for prepared in files]
    known = con.execute(
        f"SELECT DISTINCT path, sha256 FROM sources WHERE list_contains({STRINGS}, path)", [strings(paths)]).fetchall()
    stored = set(known)
    stored_first = [(prepared.source_row["path"], prepared.source_row["sha256"]) in stored for prepared in files]
    files = [prepared for prepared, skip in zip(files, stored_first) if not skip]
    paths = [prepared.source_row["path"] for prepared in files]
    seen = {path for path, _sha256 in known} & set(paths)
    if seen:
        for name in DERIVED:
            con.execute(f"DELETE FROM {name} WHERE list_contains({STRINGS}, source_path)", [strings(sorted(seen))])
    counts = []
    pending = _Pending(con)
    for prepared, path in zip(files, paths):
        count = 0
        for name, table in prepared.tables:
            if name == "records":
                count += _insert_records(con, path, table, path in seen)
            else:
                pending.add(name, table)
        counts.append(count)
    pending.flush()
    if files:
        placeholders = ", ".join("?" for _ in SOURCE_COLUMNS)
        con.executemany(f"INSERT INTO sources ({', '.join(SOURCE_COLUMNS)}) VALUES ({placeholders})",
                        [[prepared.source_row[k] for k in SOURCE_COLUMNS] for prepared in files])
    written = iter(counts)
    return [None if skip else next(written) for skip in stored_first]


PENDING_BYTES = 32 * 2**20
"""Batches of small files gathered into one insert per table (an insert has a fixed cost)."""


class _Pending:
    """Derived-table batches waiting to be inserted, a few MiB at a time: a large file's batches go in
    as they come, small files' batches together."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.tables: dict[str, list[pa.Table]] = defaultdict(list)
        self.bytes = 0

    def add(self, name: str, table: pa.Table) -> None:
        self.tables[name].append(table)
        self.bytes += table.nbytes
        if self.bytes >= PENDING_BYTES:
            self.flush()

    def flush(self) -> None:
        for name, tables in self.tables.items():
            _insert(self.con, name, pa.concat_tables(tables))
        self.tables.clear()
        self.bytes = 0


def _insert_records(con: duckdb.DuckDBPyConnection, path: str, table: pa.Table, seen: bool) -> int:
    """Insert a batch of a file's records; for a path seen before, those already stored are left out."""
    if seen:
        ids = table.column("record_id")
        stored = con.execute(f"SELECT record_id FROM records WHERE source_path = ? "
                             f"AND list_contains({STRINGS}, record_id)", [path, strings(ids.to_pylist())]).fetchall()
        if stored:
            table = table.filter(pc.invert(pc.is_in(ids, pa.array([i for i, in stored], pa.string()))))
    _insert(con, "records", table)
    return table.num_rows - table.column("kind").to_pylist().count("filler")


def _insert(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Insert an Arrow batch into table `name`, its columns matched by name. Through a relation, not a
    registered view: a view registered and dropped inside a transaction keeps its batch alive until the
    commit, so every batch of a large file would stay in memory."""
    columns = [duckdb.ColumnExpression(column) for column in con.table(name).columns]
    con.from_arrow(table).select(*columns).insert_into(name)
