"""Leases on source files' content, so that writers racing on one lake store each file version once.

DuckLake has no UNIQUE constraint, and concurrent appends never conflict: two writers that both see no
`sources` row for a file would both store it. So, before preparing a file, a writer INSERTs a lease on
the file's content (its SHA-256: the same bytes under two mount paths are one file version) into a table
with a real PRIMARY KEY beside the lake's catalog: in the catalog's PostgreSQL database itself, or for a
SQLite catalog in the SQLite file `<catalog>.leases` next to it (SQLite's locks are per file, and DuckDB's
SQLite scanner holds the catalog's read lock between statements, which would stall a lease written into
the catalog file). The loser of the race gets a unique violation and skips the file, reporting who holds
it; the path is kept in the row as information.

A lease names its writer's host, pid and the process's start time. One whose writer is gone is taken over:
at once when the writer ran on this host and its process has ended (the start time tells a reused pid
from the writer), else after the lease ($ARCHIVER_LEASE_SECONDS, default 15 minutes) without a commit.
Taking over is a compare-and-set: DELETE the lease only where it still names the dead writer, then
INSERT, so that of several writers taking over at once only one INSERT succeeds. Committed leases stay:
they are the ingest's lineage (which writer, host and process stored which file version, and when).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass

import duckdb

from ..offline import install_extensions, literal
from ..processes import alive, start_time
from .backend import LEASES_SUFFIX, Location, extensions

LEASE_SECONDS = 15 * 60
BUSY_SECONDS = 120  # how long a SQLite lease file may stay locked by another writer
TABLE = "archiver_leases"
COLUMNS = "sha256, path, writer, host, pid, started"


def lease_seconds() -> float:
    return float(os.environ.get("ARCHIVER_LEASE_SECONDS") or LEASE_SECONDS)


@dataclass(frozen=True)
class Holder:
    """Who holds a lease on a file's content, and whether they committed it."""

    sha256: str
    path: str
    writer: str
    host: str
    pid: int
    started: str | None
    age: float
    committed: bool

    @property
    def dead_here(self) -> bool:
        """Its writer ran on this host and its process has ended (or the pid now names another process)."""
        return self.host == socket.gethostname() and not alive(self.pid, self.started)

    def describe(self) -> str:
        if self.committed:
            return f"already stored by writer {self.writer} as {self.path}"
        return f"being ingested by writer {self.writer} (leased {self.age:.0f}s ago)"


class Leases:
    """Leases of one writer; `take` before preparing a file, `confirm` before committing it, `done` after."""

    def __init__(self, runner: _Runner, lease: float | None = None) -> None:
        self.runner = runner
        self.lease = lease_seconds() if lease is None else lease
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.started = start_time(self.pid)
        self.writer = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self.taken_over: list[str] = []
        runner.setup()

    def take(self, path: str, sha256: str) -> Holder | None:
        """None when the file's content is now ours; else who holds it."""
        if self._insert(path, sha256):
            return None
        holder = self.holder(sha256)
        if holder is None:  # released between our INSERT and our look
            return None if self._insert(path, sha256) else self.holder(sha256)
        if holder.writer == self.writer:  # the same bytes at another path of this run
            return None
        if holder.committed or not self.expired(holder):
            return holder
        self.runner.execute(
            f"DELETE FROM {TABLE} WHERE sha256 = {literal(sha256)} "
            f"AND writer = {literal(holder.writer)} AND committed_at IS NULL"
        )
        if self._insert(path, sha256):
            self.taken_over.append(
                f"{path}: from writer {holder.writer}, "
                + ("whose process has ended" if holder.dead_here else f"silent for {holder.age:.0f}s")
            )
            return None
        return self.holder(sha256) or holder

    def expired(self, holder: Holder) -> bool:
        """Whether an uncommitted lease may be taken over: its writer is dead, or silent past the lease."""
        return holder.dead_here or holder.age >= self.lease

    def confirm(self, sha256: str) -> bool:
        """Whether the lease is still ours (no one took it over while we prepared the file)."""
        holder = self.holder(sha256)
        return holder is not None and holder.writer == self.writer

    def done(self, sha256: str) -> None:
        self.runner.execute(
            f"UPDATE {TABLE} SET committed_at = {self.runner.now} WHERE sha256 = {literal(sha256)} "
            f"AND writer = {literal(self.writer)}"
        )

    def settle(self, stored: list[str]) -> None:
        """Mark committed the leases, held by writers that died or fell silent, on contents the archive
        holds: such a writer was stopped between its commit and marking its leases, so its commit stands
        (a writer marks its leases after its commit, file by file)."""
        wanted = set(stored)
        for holder in self.held():
            if holder.sha256 in wanted and self.expired(holder):
                self.runner.execute(
                    f"UPDATE {TABLE} SET committed_at = {self.runner.now} WHERE sha256 = {literal(holder.sha256)} "
                    f"AND writer = {literal(holder.writer)} AND committed_at IS NULL"
                )

    def release(self) -> None:
        """Drop our leases on files we did not commit, so another run can take them at once."""
        self.runner.execute(f"DELETE FROM {TABLE} WHERE writer = {literal(self.writer)} AND committed_at IS NULL")

    def holder(self, sha256: str) -> Holder | None:
        rows = self._holders(f"sha256 = {literal(sha256)}")
        return rows[0] if rows else None

    def held(self) -> list[Holder]:
        """Every uncommitted lease: files being ingested now, or left by writers that died."""
        return self._holders("committed_at IS NULL")

    def expire(self) -> list[Holder]:
        """Delete the uncommitted leases of dead or silent writers; the ones deleted."""
        gone = [holder for holder in self.held() if self.expired(holder)]
        for holder in gone:
            self.runner.execute(
                f"DELETE FROM {TABLE} WHERE sha256 = {literal(holder.sha256)} "
                f"AND writer = {literal(holder.writer)} AND committed_at IS NULL"
            )
        return gone

    def _holders(self, where: str) -> list[Holder]:
        rows = self.runner.query(
            f"SELECT {COLUMNS}, {self.runner.age}, committed_at IS NOT NULL FROM {TABLE} WHERE {where} ORDER BY path"
        )
        return [
            Holder(sha, path, writer, host, int(pid), started, float(age), bool(committed))
            for sha, path, writer, host, pid, started, age, committed in rows
        ]

    def _insert(self, path: str, sha256: str) -> bool:
        values = ", ".join(
            [
                literal(sha256),
                literal(path),
                literal(self.writer),
                literal(self.host),
                str(self.pid),
                "NULL" if self.started is None else literal(self.started),
                self.runner.now,
            ]
        )
        try:
            self.runner.execute(f"INSERT INTO {TABLE} ({COLUMNS}, leased_at) VALUES ({values})")
            return True
        except self.runner.unique_violation as exc:
            if "unique" in str(exc).lower() or "duplicate key" in str(exc).lower():
                return False
            raise

    def close(self) -> None:
        self.runner.close()


class _Runner:
    """SQL in the catalog database: its own clock (`now`, `age`), so writers on many hosts agree."""

    now: str
    age: str
    unique_violation: type[Exception]
    schema: str

    def setup(self) -> None:
        self.execute(self.schema)

    def execute(self, sql: str) -> None:
        raise NotImplementedError

    def query(self, sql: str) -> list[tuple]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _SQLite(_Runner):
    now = "(julianday('now') - 2440587.5) * 86400.0"
    age = f"{now} - leased_at"
    unique_violation = sqlite3.IntegrityError
    schema = (
        f"CREATE TABLE IF NOT EXISTS {TABLE} (sha256 TEXT PRIMARY KEY, path TEXT NOT NULL, writer TEXT NOT NULL, "
        "host TEXT NOT NULL, pid INTEGER NOT NULL, started TEXT, leased_at REAL NOT NULL, committed_at REAL)"
    )

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
        self._into_wal()

    def _into_wal(self) -> None:
        """Turns the file to WAL, once a writer wins the race. The change takes the file's exclusive lock
        without SQLite's busy handler, so a writer opening the same new file at that moment is refused at
        once ("database is locked") whatever the timeout: it tries again until the timeout has passed."""
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                self.db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def execute(self, sql: str) -> None:
        self.db.execute(sql)

    def query(self, sql: str) -> list[tuple]:
        return self.db.execute(sql).fetchall()

    def close(self) -> None:
        self.db.close()


class _PostgreSQL(_Runner):
    """Through DuckDB's postgres extension (installed for the lake): no Python driver needed. On a DuckDB
    connection of its own, so that a lake opened read-only (as `db check` opens it) can still see leases."""

    now = "now()"
    age = "extract(epoch FROM now() - leased_at)"
    unique_violation = duckdb.Error
    schema = (
        f"CREATE TABLE IF NOT EXISTS {TABLE} (sha256 text PRIMARY KEY, path text NOT NULL, writer text NOT NULL, "
        "host text NOT NULL, pid integer NOT NULL, started text, leased_at timestamptz NOT NULL, "
        "committed_at timestamptz)"
    )
    ALIAS = "archiver_catalog"

    def __init__(self, location: Location) -> None:
        self.cursor = duckdb.connect()
        install_extensions(self.cursor, extensions(location))
        self.cursor.execute(f"ATTACH {literal(location.catalog_path)} AS {self.ALIAS} (TYPE postgres)")

    def setup(self) -> None:
        try:
            super().setup()
        except duckdb.Error as exc:  # two writers creating the table at once: one wins, which is all we need
            if "already exists" not in str(exc) and "duplicate key" not in str(exc):
                raise

    def execute(self, sql: str) -> None:
        self.cursor.execute(f"CALL postgres_execute('{self.ALIAS}', {literal(sql)})")

    def query(self, sql: str) -> list[tuple]:
        return self.cursor.execute(f"SELECT * FROM postgres_query('{self.ALIAS}', {literal(sql)})").fetchall()

    def close(self) -> None:
        self.cursor.close()


def leases_for(location: Location) -> Leases | None:
    """Leases for a lake that admits several writers; None where one writer at a time is all there is."""
    if location.catalog == "sqlite":
        return Leases(_SQLite(location.catalog_path + LEASES_SUFFIX))
    if location.catalog == "postgres":
        return Leases(_PostgreSQL(location))
    return None
