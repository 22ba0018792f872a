"""Claims on source files, so that writers racing on one lake store each file version once.

DuckLake has no UNIQUE constraint, and concurrent appends never conflict: two writers that both see
no `sources` row for a file would both store it. So, before preparing a file, a writer INSERTs a claim
on (path, sha256) into a table with a real PRIMARY KEY beside the lake's catalog: in the catalog's
PostgreSQL database itself, or for a SQLite catalog in the SQLite file `<catalog>.claims` next to it
(SQLite's locks are per file, and DuckDB's SQLite scanner holds the catalog's read lock between
statements, which would stall a claim written into the catalog file). Both arbitrate concurrent inserts. The loser of the race gets a unique
violation and skips the file, reporting who holds it. A claim whose writer died (not committed after
the lease, $ARCHIVER_CLAIM_LEASE seconds, default 15 minutes) is taken over by a compare-and-set:
DELETE the claim only where it still names the dead writer, then INSERT, so that of several writers
taking over at once only one INSERT succeeds. Committed claims stay: they are the ingest's lineage
(which writer, host and process stored which file version, and when).
"""
from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from dataclasses import dataclass

import duckdb

from .backend import CLAIMS_SUFFIX, Location, literal

LEASE_SECONDS = 15 * 60
TABLE = "archiver_claims"


def lease_seconds() -> float:
    return float(os.environ.get("ARCHIVER_CLAIM_LEASE") or LEASE_SECONDS)


@dataclass(frozen=True)
class Holder:
    writer: str
    age: float
    committed: bool

    def describe(self) -> str:
        if self.committed:
            return f"already stored by writer {self.writer}"
        return f"being ingested by writer {self.writer} (claimed {self.age:.0f}s ago)"


class Claims:
    """Claims of one writer; `take` before preparing a file, `confirm` before committing it, `done` after."""

    def __init__(self, runner: _Runner, lease: float | None = None) -> None:
        self.runner = runner
        self.lease = lease_seconds() if lease is None else lease
        self.writer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.taken_over: list[str] = []
        runner.setup()

    def take(self, path: str, sha256: str) -> Holder | None:
        """None when the file is now ours; else who holds it."""
        if self._insert(path, sha256):
            return None
        holder = self.holder(path, sha256)
        if holder is None:  # released between our INSERT and our look
            return None if self._insert(path, sha256) else self.holder(path, sha256)
        if holder.committed or holder.age < self.lease:
            return holder
        self.runner.execute(
            f"DELETE FROM {TABLE} WHERE path = {literal(path)} AND sha256 = {literal(sha256)} "
            f"AND writer = {literal(holder.writer)} AND committed_at IS NULL")
        if self._insert(path, sha256):
            self.taken_over.append(f"{path}: from writer {holder.writer}, silent for {holder.age:.0f}s")
            return None
        return self.holder(path, sha256) or holder

    def confirm(self, path: str, sha256: str) -> bool:
        """Whether the claim is still ours (no one took it over while we prepared the file)."""
        holder = self.holder(path, sha256)
        return holder is not None and holder.writer == self.writer

    def done(self, path: str, sha256: str) -> None:
        self.runner.execute(
            f"UPDATE {TABLE} SET committed_at = {self.runner.now} WHERE path = {literal(path)} "
            f"AND sha256 = {literal(sha256)} AND writer = {literal(self.writer)}")

    def release(self) -> None:
        """Drop our claims on files we did not commit, so another run can take them at once."""
        self.runner.execute(f"DELETE FROM {TABLE} WHERE writer = {literal(self.writer)} AND committed_at IS NULL")

    def holder(self, path: str, sha256: str) -> Holder | None:
        row = self.runner.query(
            f"SELECT writer, {self.runner.age}, committed_at IS NOT NULL FROM {TABLE} "
            f"WHERE path = {literal(path)} AND sha256 = {literal(sha256)}")
        return Holder(row[0], float(row[1]), bool(row[2])) if row else None

    def _insert(self, path: str, sha256: str) -> bool:
        try:
            self.runner.execute(
                f"INSERT INTO {TABLE} (path, sha256, writer, host, pid, claimed_at) VALUES ({literal(path)}, "
                f"{literal(sha256)}, {literal(self.writer)}, {literal(socket.gethostname())}, {os.getpid()}, "
                f"{self.runner.now})")
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

    def query(self, sql: str) -> tuple | None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _SQLite(_Runner):
    now = "(julianday('now') - 2440587.5) * 86400.0"
    age = f"{now} - claimed_at"
    unique_violation = sqlite3.IntegrityError
    schema = (f"CREATE TABLE IF NOT EXISTS {TABLE} (path TEXT NOT NULL, sha256 TEXT NOT NULL, writer TEXT NOT NULL, "
              "host TEXT, pid INTEGER, claimed_at REAL NOT NULL, committed_at REAL, PRIMARY KEY (path, sha256))")

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, timeout=120, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")

    def execute(self, sql: str) -> None:
        self.db.execute(sql)

    def query(self, sql: str) -> tuple | None:
        return self.db.execute(sql).fetchone()

    def close(self) -> None:
        self.db.close()


class _PostgreSQL(_Runner):
    """Through DuckDB's postgres extension (already loaded for the lake): no Python driver needed."""

    now = "now()"
    age = "extract(epoch FROM now() - claimed_at)"
    unique_violation = duckdb.Error
    schema = (f"CREATE TABLE IF NOT EXISTS {TABLE} (path text NOT NULL, sha256 text NOT NULL, writer text NOT NULL, "
              "host text, pid integer, claimed_at timestamptz NOT NULL, committed_at timestamptz, "
              "PRIMARY KEY (path, sha256))")
    ALIAS = "archiver_catalog"

    def __init__(self, con: duckdb.DuckDBPyConnection, dsn: str) -> None:
        self.cursor = con.cursor()
        attached = {name for (name,) in self.cursor.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
        if self.ALIAS not in attached:
            self.cursor.execute(f"ATTACH {literal(dsn)} AS {self.ALIAS} (TYPE postgres)")

    def setup(self) -> None:
        try:
            super().setup()
        except duckdb.Error as exc:  # two writers creating the table at once: one wins, which is all we need
            if "already exists" not in str(exc) and "duplicate key" not in str(exc):
                raise

    def execute(self, sql: str) -> None:
        self.cursor.execute(f"CALL postgres_execute('{self.ALIAS}', {literal(sql)})")

    def query(self, sql: str) -> tuple | None:
        return self.cursor.execute(f"SELECT * FROM postgres_query('{self.ALIAS}', {literal(sql)})").fetchone()

    def close(self) -> None:
        self.cursor.close()


def claims_for(con: duckdb.DuckDBPyConnection, location: Location) -> Claims | None:
    """Claims for a lake that admits several writers; None where one writer at a time is all there is."""
    if location.catalog == "sqlite":
        return Claims(_SQLite(location.catalog_path + CLAIMS_SUFFIX))
    if location.catalog == "postgres":
        return Claims(_PostgreSQL(con, location.catalog_path))
    return None
