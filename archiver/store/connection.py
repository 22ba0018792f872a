"""One short-lived DuckDB connection per command, waiting politely for other processes."""

from __future__ import annotations

import contextlib
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import duckdb

from ..defaults import WAIT_SECONDS
from ..errors import ArchiveError
from .backend import (
    DEFAULT_DB,
    BackendError,
    Location,
    create_lake,
    exists,
    install,
    installed,
    locate,
    open_database,
    spill_folder,
)
from .refusals import NoArchiveError, explain, out_of_memory, refuse_non_archive, storage_failure

__all__ = ["DEFAULT_DB", "DEFAULT_WAIT_SECONDS", "ArchiveBusyError", "BackendError", "connect", "transaction"]

DEFAULT_WAIT_SECONDS = WAIT_SECONDS
_LOCK = re.compile(r"Could not set lock on file|Conflicting lock|database is locked")
_PID = re.compile(r"\(PID (\d+)\)")
_NO_LAKE = re.compile(
    r"data_path is not set|ducklake_metadata.*does not exist|relation .*ducklake\w* does not exist",
    re.IGNORECASE | re.DOTALL,
)


class ArchiveBusyError(ArchiveError):
    """Another process holds the archive for longer than we were allowed to wait."""

    http_status = 503
    """The web view answers it with `retry-after`: the writer is gone in a moment, as a rule."""


RETRY_PAUSE = 0.1
"""Seconds at most between two tries at a busy archive: a reader that steps aside briefly (`archiver serve`)
lets a waiting writer in."""


def connect(
    path: str | Location, read_only: bool = False, wait: float = DEFAULT_WAIT_SECONDS
) -> duckdb.DuckDBPyConnection:
    """Open the archive (a file or a lake), retrying while another process holds its lock, then say who
    holds it."""
    location = path if isinstance(path, Location) else locate(path)
    if read_only and exists(location) is False:
        raise NoArchiveError(f"{location.describe()}: no archive here (ingest something first, or pass --db)")
    if not location.is_lake:
        refuse_non_archive(location.catalog_path)
    if location.is_lake and not installed(location):
        install(location)
    deadline = time.monotonic() + max(wait, 0.0)
    delay = 0.05
    created = False
    while True:
        try:
            return open_database(location, read_only)
        except duckdb.Error as error:
            exc = error
            if location.is_lake and not read_only and not created and _NO_LAKE.search(str(exc)):
                raced = _create(location)
                if raced is None:
                    created = True
                    continue
                exc = raced
            else:
                _explain(exc, location, read_only)
            if time.monotonic() >= deadline:
                raise _busy(exc, location, wait) from None
            time.sleep(delay)
            delay = min(delay * 2, RETRY_PAUSE)


_RACE = re.compile(r"already exists|duplicate key|database is locked|data_path is not set", re.IGNORECASE)


def _create(location: Location) -> duckdb.Error | None:
    """Create the lake: None once created; the error when another process was creating it at the same
    moment (its tables already exist, or its catalog is locked), after which opening is tried again."""
    try:
        create_lake(location)
    except duckdb.Error as exc:
        if not _RACE.search(str(exc)):
            raise BackendError(f"{location.describe()}: {' '.join(str(exc).split())}") from None
        return exc
    return None


def retry_busy(func, con: duckdb.DuckDBPyConnection, attempts: int = 8):
    """`func(con)`, again with backoff while a lake's SQLite catalog reports that another writer has it locked."""
    for attempt in range(attempts):
        try:
            return func(con)
        except duckdb.Error as exc:
            if "database is locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _explain(exc: duckdb.Error, location: Location, read_only: bool) -> None:
    """Raise a clear error for what waiting cannot cure; return when `exc` is a lock held by another process."""
    if _LOCK.search(str(exc)):
        return
    if location.is_lake and read_only and _NO_LAKE.search(str(exc)):
        raise NoArchiveError(f"{location.describe()}: no archive here (ingest something first, or pass --db)")
    if location.is_lake:
        raise BackendError(f"{location.describe()}: {' '.join(str(exc).split())}") from None
    raise explain(exc, location.url) or exc


def catalog_locked(exc: duckdb.Error, location: Location) -> ArchiveBusyError | None:
    """A lake's SQLite catalog that another writer kept locked past SQLite's own wait, met by a statement
    after the lake was opened (DuckLake reads its catalog for every statement), as one line; None for any
    other error."""
    if location.catalog != "sqlite" or "database is locked" not in str(exc):
        return None
    return ArchiveBusyError(
        f"{location.shown}: the lake's SQLite catalog stayed locked by another writer; what was committed "
        "stays: run the same command again (a PostgreSQL catalog serves many writers at once)"
    )


def _busy(exc: duckdb.Error, location: Location, wait: float) -> ArchiveBusyError:
    pid = _PID.search(str(exc))
    holder = f"process {pid.group(1)}" if pid else "another process"
    why = ""
    if location.catalog == "duckdb":
        why = (
            " (a lake whose catalog is a DuckDB file admits one process at a time; for several writers "
            "use ducklake:postgres:... or ducklake:sqlite:...)"
        )
    return ArchiveBusyError(
        f"{location.shown}: the archive is busy: {holder} holds it; waited {wait:g}s (use --wait to wait longer){why}"
    )


@contextlib.contextmanager
def bounded_memory(con: duckdb.DuckDBPyConnection, max_memory: int, max_spill: int | None = None) -> Iterator[None]:
    """DuckDB's buffer pool held to `max_memory` bytes within the block (for the whole process's DuckDB), what
    does not fit spilled to a folder of this process (`backend.spill_folder`: the archive's own folder may be
    read-only), at most `max_spill` bytes of it (None: DuckDB's own bound, 90% of the free disk); the settings
    as they were after it (the spill folder stays: DuckDB cannot change it once it has spilled there)."""
    settings = ("memory_limit", "max_temp_directory_size")
    before = [con.execute(f"SELECT current_setting('{name}')").fetchone()[0] for name in settings]
    con.execute(f"SET memory_limit = '{int(max_memory)}B'")
    if max_spill is not None:
        con.execute(f"SET max_temp_directory_size = '{int(max_spill)}B'")
    with contextlib.suppress(duckdb.NotImplementedException):  # DuckDB spilled to its folder already: it stays
        con.execute(f"SET temp_directory = '{spill_folder()}'")
    try:
        yield
    finally:
        for name, value in zip(settings, before, strict=True):
            with contextlib.suppress(duckdb.Error):  # "90% of available disk space" is DuckDB's word, not a value
                con.execute(f"SET {name} = '{value}'")


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection, commit: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """The block in one transaction: committed when it ends (rolled back instead when not `commit`: a
    snapshot that changes nothing), rolled back when it raises, or is interrupted."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT" if commit else "ROLLBACK")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK, unless the failed statement was the COMMIT, which leaves no transaction to roll back."""
    with contextlib.suppress(duckdb.TransactionException):
        con.execute("ROLLBACK")


T = TypeVar("T")
COMMIT_ATTEMPTS = 10
BACKOFF_SECONDS = 0.05
BACKOFF_MAX_SECONDS = 5.0
_CONFLICT = re.compile(
    r"conflict|database is locked|busy|could not serialize|deadlock|"
    r"duplicate key value violates unique constraint \"ducklake_",
    re.IGNORECASE,
)


class CommitConflictError(ArchiveError):
    """A commit still conflicted with other writers after every retry; nothing of it was stored."""


def is_conflict(exc: Exception) -> bool:
    """A commit another writer got in the way of: retried. A disk that refuses to store, or a memory limit
    reached, is no conflict."""
    if storage_failure(exc) or out_of_memory(exc):
        return False
    return isinstance(exc, duckdb.TransactionException) or bool(_CONFLICT.search(str(exc)))


def committed(con: duckdb.DuckDBPyConnection, write: Callable[[], T], lost: str, on_retry: Callable | None = None) -> T:
    """`write()` in a transaction, again with backoff while the commit conflicts with other writers (a lake
    several share: DuckLake checks at commit, the catalog database may be busy); `on_retry` hears of each retry.
    After the last, `CommitConflictError` says what was `lost`."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            with transaction(con):
                return write()
        except duckdb.Error as exc:
            if not is_conflict(exc):
                raise
            if attempt == COMMIT_ATTEMPTS - 1:
                raise CommitConflictError(
                    f"commit conflicted {COMMIT_ATTEMPTS} times, {lost} (last error: {' '.join(str(exc).split())})"
                ) from exc
            if on_retry:
                on_retry(exc)
            time.sleep(min(BACKOFF_MAX_SECONDS, BACKOFF_SECONDS * 2**attempt) * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable")


def drop_temporary(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Drop the temporary tables and views named `names` that exist on `con` (DuckDB's `DROP TABLE` refuses a
    view, and an error would end the caller's transaction; `information_schema` took 0.36 s at 10M claims). In a
    transaction an error has ended, nothing: its rollback drops what it made, and a `finally` that raised here
    would hide that error (an out-of-memory retried as a commit conflict instead of a smaller batch)."""
    if not names:
        return
    try:
        views = {name for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall()}
    except duckdb.TransactionException:
        return
    for name in names:
        con.execute(f"DROP {'VIEW' if name in views else 'TABLE'} IF EXISTS temp.main.{name}")


def temporary_view(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> None:
    """Make the temporary view `name` of `sql` on `con`, in place of a temporary table or view of that name."""
    drop_temporary(con, name)
    con.execute(f"CREATE TEMP VIEW {name} AS {sql}")
