"""Heal on opening for writing: remove index rows of file versions that no committed ingest recorded.

Ingest writes a commit group's `sources` rows last, in the same transaction as the group's records and
index rows, so a version with no `sources` row was never committed. DuckDB is expected to drop a killed
transaction whole, but large appends are written to the database file before COMMIT, and a storage
engine that replays them after a crash (DuckDB's open pull request #25931, "Fix uncommitted data
recovered accidentally", describes such a case) would leave rows that belong to no committed version:
counted twice once the file is ingested again. So an open that finds such a replay pending (a WAL
left by a process that did not close the archive) removes them, as does the open that upgrades the
schema (archives made before the commit marker), and records what it removed in `healed` (`db check`
names it, `stats` counts it). A clean archive is not scanned: at 10M claims the scan costs about 2 s.
Only a DuckDB file replays a WAL; a DuckLake commits through its catalog in one transaction.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb

from .backend import Location
from .connection import rollback
from .tables import INDEX_TABLES, UNCOMMITTED

_ORPHANS = (
    f"SELECT t.source_path, t.source_sha256, count(*) FROM {{table}} t WHERE {UNCOMMITTED} GROUP BY ALL ORDER BY ALL"
)


@dataclass(frozen=True)
class Healed:
    table: str
    source_path: str | None
    source_sha256: str | None
    rows: int

    def __str__(self) -> str:
        version = f" ({self.source_sha256[:12]})" if self.source_sha256 else ""
        return f"{self.source_path}{version}: {self.rows} {self.table} rows"


def recovering(location: Location) -> bool:
    """Whether opening the archive will replay a WAL: a process wrote to it and did not close it (a
    process that holds it still keeps every other one out, so one that got in finds a dead writer's)."""
    return not location.is_lake and os.path.exists(location.url + ".wal")


def orphans(con: duckdb.DuckDBPyConnection) -> list[Healed]:
    """Index rows whose source version has no committed `sources` row, by table and version."""
    return [
        Healed(table, path, sha256, count)
        for table in INDEX_TABLES
        for path, sha256, count in con.execute(_ORPHANS.format(table=table)).fetchall()
    ]


def heal(con: duckdb.DuckDBPyConnection) -> list[Healed]:
    """Remove the rows of uncommitted versions in one transaction and record them in `healed`."""
    found = orphans(con)
    if not found:
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        for table in sorted({item.table for item in found}):
            con.execute(f"DELETE FROM {table} t WHERE {UNCOMMITTED}")
        con.executemany(
            "INSERT INTO healed VALUES (now(), ?, ?, ?, ?)",
            [[item.table, item.source_path, item.source_sha256, item.rows] for item in found],
        )
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return found
