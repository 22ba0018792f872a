"""Numbered SQL migrations, applied in order, one transaction each, recorded in the archive."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .._core import migrations as built_in
from ..errors import ArchiveError
from . import audit_sums, cells, views
from .connection import transaction
from .kept import index_by_task
from .reread import claims_read_again

_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ
)"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    text: str

    def sql(self) -> str:
        return self.text


def _checkout_migrations() -> Path | None:
    """The repository's top-level `migrations/`, when the package runs from a checkout (an edited
    migration counts before the core is built again)."""
    folder = Path(__file__).resolve().parent.parent.parent / "migrations"
    return folder if (folder / "0001_initial.sql").is_file() else None


def available(directory: Path | None = None) -> list[Migration]:
    """The migrations in order: those of `directory`, else of the checkout, else those built into the core
    (`migrations/*.sql`, embedded by archiver/core/build.rs: a wheel carries no folder of them)."""
    folder = directory or _checkout_migrations()
    if folder is not None:
        files = [(path.name, path.read_text(encoding="utf-8")) for path in sorted(folder.iterdir())]
    else:
        files = built_in()
    found = []
    for name, text in files:
        match = _NAME.match(name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), text))
    return found


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations' "
        "AND table_catalog = current_database() AND table_schema = current_schema()"
    ).fetchall()[0][0]
    if not exists:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchall()[0][0]


class SchemaTooNewError(ArchiveError):
    """The archive was migrated by a newer archiver: this one does not know its tables and must not write."""


def refuse_newer(con: duckdb.DuckDBPyConnection, where: str) -> None:
    """Raise `SchemaTooNewError` when the archive's schema is past this program's last migration."""
    have, known = current_version(con), latest_version()
    if have > known:
        raise SchemaTooNewError(
            f"{where}: the archive's schema is at version {have}, newer than this archiver's "
            f"(version {known}); use a newer archiver (pip install --upgrade a2a-archiver)"
        )


def pending(con: duckdb.DuckDBPyConnection, upto: int | None = None) -> list[Migration]:
    have = current_version(con)
    return [m for m in available() if m.version > have and (upto is None or m.version <= upto)]


def upgrade(
    con: duckdb.DuckDBPyConnection, upto: int | None = None, before: Callable[[Migration], None] | None = None
) -> list[Migration]:
    """Apply what is pending, each migration in its own transaction (`before` hears of each as it begins); then, at
    the latest version, (re)make the views when a migration was applied or their definitions are not the ones the
    archive holds (`store.views`).

    Processes opening a new lake together race to apply the same migration: the loser's commit fails,
    and it goes on from whatever version the winner recorded (or with the views the winner made)."""
    applied = [
        migration
        for migration in pending(con, upto)
        if _raced(lambda m=migration: _apply(con, m, before), lambda m=migration: current_version(con) >= m.version)
    ]
    if current_version(con) == latest_version():
        # After any migration, so that no view outlives the tables it was made over, and whenever the
        # definitions here changed.
        _raced(lambda: views.create(con), lambda: not applied and not views.stale(con))
    return applied


def latest_version() -> int:
    return max(m.version for m in available())


def outdated(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether opening for writing would change the schema: a migration is pending, or the views are stale."""
    return bool(pending(con)) or views.stale(con)


def _raced(step, done) -> bool:
    """Run `step` unless `done()`; when it fails because another process did it first, go on. Whether
    this process did it."""
    for attempt in range(_RACE_ATTEMPTS):
        if done():
            return False
        try:
            step()
            return True
        except duckdb.Error:
            if done():
                return False
            if attempt == _RACE_ATTEMPTS - 1:
                raise
            time.sleep(0.1 * 2**attempt)
    return False


_RACE_ATTEMPTS = 5


AFTER = {14: claims_read_again, 18: index_by_task, 19: cells.rebuild, 20: audit_sums.rebuild}
"""What a migration's SQL cannot do, done after it in its transaction: by version (`store.reread`, `store.kept`,
`store.cells`, `store.audit_sums`)."""


def _apply(
    con: duckdb.DuckDBPyConnection, migration: Migration, before: Callable[[Migration], None] | None = None
) -> None:
    if before:
        before(migration)
    with transaction(con):
        con.execute(BOOKKEEPING)
        con.execute(migration.sql())
        if migration.version in AFTER:
            AFTER[migration.version](con)
        con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [migration.version, migration.name])
