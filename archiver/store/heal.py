"""Heal and repair: remove index rows that no committed ingest recorded.

Ingest writes a commit group's `sources` rows last, in the same transaction as the group's records and
index rows, so a version with no `sources` row was never committed. DuckDB is expected to drop a killed
transaction whole, but large appends are written to the database file before COMMIT, and a storage
engine that replays them after a crash (DuckDB's open pull request #25931, "Fix uncommitted data
recovered accidentally", describes such a case) would leave rows that belong to no committed version:
counted twice once the file is ingested again. Ingest also writes a Part with its stored copy, and a
claim or citation with its Part, so a part, claim or citation whose copy or Part is not indexed was
written by no committed ingest either, whatever version it names (an archive torn before the commit
marker had its orphans given their path's latest version by migration 0007, so only this shows them).

`archiver db repair` removes both kinds whenever asked, as does an upgrade of the schema. An open that
finds a replay pending (a WAL left by a process that did not close the archive) removes the first kind
(a replay tears this version's commit groups, whose rows all name their version): at 10M claims that
scan costs about 2 s, where the second kind's costs as much as `db check` (54 s at 19M claims). Each
removal is recorded in `healed` (`db check` names it, `stats` counts it). A clean archive is not scanned
on opening. Only a DuckDB file replays a WAL; a DuckLake commits through its catalog in one transaction."""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb

from . import kept
from .backend import Location
from .connection import ArchiveBusyError, bounded_memory, transaction
from .leases import leases_for
from .tables import INDEX_TABLES, UNANCHORED, UNCOMMITTED

KEYED = ("results", "parts", "citations", "claims")
"""The tables whose rows name their result: a row removed from one changes the claim index's rows of its result."""
_ROWS = "SELECT t.source_path, t.source_sha256, count(*) FROM {table} t WHERE {where} GROUP BY ALL ORDER BY ALL"


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
    """What `heal(con, unanchored=True)` removes, by table and version: rows of versions with no committed
    `sources` row, then parts, citations and claims whose copy or Part is not indexed once those are gone.
    Counted in one transaction that removes as it goes and is rolled back, so that what removing the first
    kind leaves unanchored is counted too, and nothing changes."""
    with transaction(con, commit=False):
        return _remove(con, unanchored=True)


def heal(con: duckdb.DuckDBPyConnection, unanchored: bool = False) -> list[Healed]:
    """Remove the rows of uncommitted versions (and, when `unanchored`, the parts, citations and claims
    whose copy or Part is not indexed: a scan as costly as `db check`'s) in one transaction, and record
    them in `healed`; what was removed, by table and version (nothing when nothing was found)."""
    with transaction(con):
        found = _remove(con, unanchored)
        if found:
            con.executemany(
                "INSERT INTO healed VALUES (now(), ?, ?, ?, ?)",
                [[item.table, item.source_path, item.source_sha256, item.rows] for item in found],
            )
    return found


def _remove(con: duckdb.DuckDBPyConnection, unanchored: bool) -> list[Healed]:
    """Delete, inside the caller's transaction, the rows of uncommitted versions, then (when `unanchored`)
    the parts, citations and claims whose copy or Part is not indexed."""
    steps = [(table, UNCOMMITTED) for table in INDEX_TABLES] + (list(UNANCHORED.items()) if unanchored else [])
    found = []
    with bounded_memory(con, REPAIR_MEMORY_MB * 2**20):
        for table, where in steps:
            rows = con.execute(_ROWS.format(table=table, where=where)).fetchall()
            if rows:
                if table == "agent_cards":
                    kept.touch_cards(con, f"SELECT source_path, source_dir FROM {table} t WHERE {where}")
                elif table in KEYED:
                    kept.touch(con, f"SELECT result_key FROM {table} t WHERE {where}")
                con.execute(f"DELETE FROM {table} t WHERE {where}")
                found += [Healed(table, path, sha256, count) for path, sha256, count in rows]
    return found


REPAIR_MEMORY_MB = 512
"""DuckDB's buffer pool while healing (it spills to disk beyond): on the 1.8M-task benchmark archive the
scans of 18.9M claims against 6.3M parts peaked at 4.2 GB unbounded, at 748 MB under this bound, in 59 s
against 54 s."""


def removed_by_table(found: list[Healed]) -> dict[str, int]:
    """Rows removed per table, tables in the index's order."""
    totals = dict.fromkeys(INDEX_TABLES, 0)
    for item in found:
        totals[item.table] += item.rows
    return {table: rows for table, rows in totals.items() if rows}


def refuse_while_writing(location: Location) -> None:
    """Raise `ArchiveBusyError` when another writer is ingesting into this lake: the rows of its open
    transaction are not visible, but its leases say it is there. (A DuckDB file is locked by whoever
    writes it, and a repair opens it for writing.)"""
    leases = leases_for(location)
    if leases is None:
        return
    try:
        live = [holder for holder in leases.held() if not leases.expired(holder)]
    finally:
        leases.close()
    if live:
        raise ArchiveBusyError(
            f"{location.describe()}: another writer is ingesting ({len(live)} files leased; {live[0].path} "
            f"{live[0].describe()}); run `archiver db repair` once it is done"
        )
