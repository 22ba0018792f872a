"""Numbered SQL migrations, applied in order, one transaction each, recorded in the archive."""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import ArchiverError

_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
_BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ
)"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")


def migrations_dir() -> Path:
    """`archiver/_migrations` in an installed wheel, else the repository's top-level `migrations/`."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_migrations", package.parent / "migrations"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the archiver's migrations are missing from this installation")


def available(directory: Path | None = None) -> list[Migration]:
    found = []
    for path in sorted((directory or migrations_dir()).iterdir()):
        match = _NAME.match(path.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), path))
    return found


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations' "
        "AND table_catalog = current_database() AND table_schema = current_schema()"
    ).fetchone()[0]
    if not exists:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]


class SchemaTooNew(ArchiverError):
    """The archive was migrated by a newer archiver: this one does not know its tables and must not write."""


def refuse_newer(con: duckdb.DuckDBPyConnection, where: str) -> None:
    """Raise `SchemaTooNew` when the archive's schema is past this program's last migration."""
    have, known = current_version(con), max(m.version for m in available())
    if have > known:
        raise SchemaTooNew(
            f"{where}: the archive's schema is at version {have}, newer than this archiver's "
            f"(version {known}); use a newer archiver (pip install --upgrade archiver)"
        )


def pending(con: duckdb.DuckDBPyConnection, upto: int | None = None) -> list[Migration]:
    have = current_version(con)
    return [m for m in available() if m.version > have and (upto is None or m.version <= upto)]


def upgrade(con: duckdb.DuckDBPyConnection, upto: int | None = None) -> list[Migration]:
    """Apply what is pending, each migration in its own transaction.

    Processes opening a new lake together race to apply the same migration: the loser's commit fails,
    and it goes on from whatever version the winner recorded."""
    applied = []
    for migration in pending(con, upto):
        if current_version(con) >= migration.version:
            continue
        for attempt in range(_RACE_ATTEMPTS):
            try:
                _apply(con, migration)
                applied.append(migration)
                break
            except duckdb.Error:
                if current_version(con) >= migration.version:
                    break
                if attempt == _RACE_ATTEMPTS - 1:
                    raise
                time.sleep(0.1 * 2**attempt)
    return applied


_RACE_ATTEMPTS = 5


def _apply(con: duckdb.DuckDBPyConnection, migration: Migration) -> None:
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(_BOOKKEEPING)
        con.execute(migration.sql())
        con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [migration.version, migration.name])
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK, unless the failed statement was the COMMIT, which leaves no transaction to roll back."""
    with contextlib.suppress(duckdb.TransactionException):
        con.execute("ROLLBACK")
