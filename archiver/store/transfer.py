"""Transfer an archive into another (a file into a lake, a lake into a file): every table, row for row.

Rows travel as Arrow batches between the two connections, so neither needs the other's extensions,
and raw bytes (BLOB), lists and JSON arrive as they were. The target's schema comes from its own
migrations; the transfer is one transaction on the target, so it lands whole or not at all.
"""

from __future__ import annotations

import duckdb

from ..errors import ArchiveError
from . import migrations
from .connection import transaction

BATCH_ROWS = 100_000


class TransferError(ArchiveError):
    """The target cannot take the transfer (it holds data already, or its schema differs)."""


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The archive's own tables (schema_migrations and schema_views are the target's, made by its own
    migrations and views)."""
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "AND table_catalog = current_database() AND table_schema = current_schema() "
            "AND table_name NOT IN ('schema_migrations', 'schema_views') ORDER BY table_name"
        ).fetchall()
    ]


def transfer_archive(source: duckdb.DuckDBPyConnection, target: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Copy every table of `source` into the empty archive `target`; returns rows transferred per table,
    checked against the source's counts."""
    have, want = migrations.current_version(source), migrations.current_version(target)
    if have != want:
        raise TransferError(f"the archives' schema versions differ ({have} and {want}): upgrade the older first")
    names = tables(source)
    missing = sorted(set(names) - set(tables(target)))
    if missing:
        raise TransferError(f"the target lacks tables {', '.join(missing)}")
    held = target.execute("SELECT count(*) FROM sources").fetchone()[0]
    if held:
        raise TransferError(f"the target holds {held} source file versions already; transfer into a new archive")
    counts = {}
    with transaction(target):
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
                raise TransferError(f"{name}: copied {counts[name]} rows of {expected}")
    return counts
