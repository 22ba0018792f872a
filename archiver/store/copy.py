"""Copy an archive into another (a file into a lake, a lake into a file): every table, row for row.

Rows travel as Arrow batches between the two connections, so neither needs the other's extensions,
and raw bytes (BLOB), lists and JSON arrive as they were. The target's schema comes from its own
migrations; the copy is one transaction on the target, so it lands whole or not at all.
"""

from __future__ import annotations

import duckdb

from . import migrations
from .migrations import rollback

BATCH_ROWS = 100_000


class CopyError(RuntimeError):
    """The target cannot take the copy (it holds data already, or its schema differs)."""


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The archive's own tables (schema_migrations is the target's, made by its migrations)."""
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "AND table_catalog = current_database() AND table_schema = current_schema() "
            "AND table_name <> 'schema_migrations' ORDER BY table_name"
        ).fetchall()
    ]


def copy_archive(source: duckdb.DuckDBPyConnection, target: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Copy every table of `source` into the empty archive `target`; returns rows copied per table,
    checked against the source's counts."""
    have, want = migrations.current_version(source), migrations.current_version(target)
    if have != want:
        raise CopyError(f"the archives' schema versions differ ({have} and {want}): upgrade the older first")
    names = tables(source)
    missing = sorted(set(names) - set(tables(target)))
    if missing:
        raise CopyError(f"the target lacks tables {', '.join(missing)}")
    held = target.execute("SELECT count(*) FROM sources").fetchone()[0]
    if held:
        raise CopyError(f"the target holds {held} source file versions already; copy into a new archive")
    counts = {}
    target.execute("BEGIN TRANSACTION")
    try:
        for name in names:
            reader = source.execute(f"SELECT * FROM {name}").to_arrow_reader(BATCH_ROWS)
            target.register("_copied", reader)
            try:
                target.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _copied")
            finally:
                target.unregister("_copied")
            counts[name] = target.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            expected = source.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            if counts[name] != expected:
                raise CopyError(f"{name}: copied {counts[name]} rows of {expected}")
        target.execute("COMMIT")
    except BaseException:
        rollback(target)
        raise
    return counts
