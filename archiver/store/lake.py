"""What a dead lake writer leaves behind, found (`db check`) and removed (`db cleanup`).

A writer of a DuckLake killed mid-run can leave two things: leases it never committed (see `leases`),
and Parquet files it wrote under the data path for a commit that never happened, which the catalog does
not list. Neither harms the archive's contents, but the first holds other writers off a file for the
whole lease when the writer ran on another host, and the second takes space forever. Both are found and
removed with DuckLake's own functions (`ducklake_delete_orphaned_files`, `ducklake_cleanup_old_files`),
never by listing the folder ourselves: only DuckLake knows which files its catalog lists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import duckdb

from ..offline import BackendError, install_extensions, literal
from .backend import Location, extensions, lake_data_path, reach_data
from .check import Problem
from .leases import Leases, leases_for

EXAMPLES = 5


@dataclass
class Cleanup:
    """What `cleanup` removed, and what it left because a live writer may still need it."""

    leases_expired: list[str] = field(default_factory=list)
    orphans_deleted: list[str] = field(default_factory=list)
    old_files_deleted: list[str] = field(default_factory=list)
    orphans_kept: str | None = None


def problems(con: duckdb.DuckDBPyConnection, location: Location) -> list[Problem]:
    """Uncommitted leases and unlisted Parquet files of a lake, as `db check` problems."""
    found = []
    leases = _existing_leases(con, location)
    if leases is not None:
        try:
            held = leases.held()
        finally:
            leases.close()
        if held:
            found.append(
                Problem(
                    "held-lease",
                    "file leases not committed (a writer ingesting now, or one that "
                    "died: `archiver db cleanup` removes those of dead writers)",
                    len(held),
                    [_lease(holder) for holder in held[:EXAMPLES]],
                )
            )
    orphans = _unlisted(con, location)
    if orphans:
        found.append(
            Problem(
                "orphan-file",
                "Parquet files under the data path that the catalog does not list "
                "(written by a commit that never finished: `archiver db cleanup` removes them)",
                len(orphans),
                orphans[:EXAMPLES],
            )
        )
    return found


def cleanup(con: duckdb.DuckDBPyConnection, location: Location) -> Cleanup:
    """Remove the leases of dead writers, then unlisted and expired Parquet files.

    Unlisted files of a writer that is still ingesting are its commit in the making: while any live
    writer holds a lease, only files older than the lease are removed."""
    done = Cleanup()
    leases = leases_for(location)
    live = False
    if leases is not None:
        try:
            done.leases_expired = [_lease(holder) for holder in leases.expire()]
            live = bool(leases.held())
        finally:
            leases.close()
    if live:
        done.orphans_kept = "another writer is ingesting: only files older than the lease were considered"
    done.orphans_deleted = _orphans(con, dry_run=False, everything=not live, lease=leases.lease if leases else 0)
    done.old_files_deleted = _paths(con, "ducklake_cleanup_old_files", "cleanup_all => true")
    return done


def _existing_leases(con: duckdb.DuckDBPyConnection, location: Location) -> Leases | None:
    """The lake's leases, without creating the SQLite file of a lake that never had any. Their table is
    made if missing, which a PostgreSQL role that may only read the catalog cannot do: that is said so."""
    if location.catalog == "sqlite" and not os.path.exists(location.catalog_path + ".leases"):
        return None
    try:
        return leases_for(location)
    except duckdb.Error as exc:
        if "permission denied" not in str(exc):
            raise
        raise BackendError(
            f"{location.describe()}: `db check` needs the catalog role of a writer (it reads the file leases "
            "and makes their table if missing); a role that may only SELECT can run sql, query, stats, audit, "
            "show and export (docs/lakes.md)"
        ) from None


def _lease(holder) -> str:
    state = "its process has ended" if holder.dead_here else f"leased {holder.age:.0f}s ago"
    return f"{holder.path}: writer {holder.writer}, {state}"


def _unlisted(con: duckdb.DuckDBPyConnection, location: Location) -> list[str]:
    """DuckLake's dry run of deleting orphans. It refuses a read-only connection (as `db check` opens), so
    then it runs on a connection of its own; a lake with a DuckDB-file catalog admits no second one,
    and is not checked for them (run `db cleanup` there)."""
    try:
        return _orphans(con, dry_run=True, everything=True)
    except duckdb.InvalidInputException as exc:
        if "readonly" not in str(exc) or location.catalog == "duckdb":
            return []
    data_path = lake_data_path(con)
    with duckdb.connect() as other:
        install_extensions(other, extensions(location))
        reach_data(other, data_path)
        other.execute(f"ATTACH {literal(location.url)} AS archiver_lake_files")
        other.execute("USE archiver_lake_files")
        return _orphans(other, dry_run=True, everything=True)


def _orphans(con: duckdb.DuckDBPyConnection, dry_run: bool, everything: bool, lease: float = 0) -> list[str]:
    scope = "cleanup_all => true" if everything else f"older_than => now() - INTERVAL {float(lease)} SECOND"
    return _paths(con, "ducklake_delete_orphaned_files", f"dry_run => {str(dry_run).lower()}, {scope}")


def _paths(con: duckdb.DuckDBPyConnection, function: str, arguments: str) -> list[str]:
    catalog = con.execute("SELECT current_database()").fetchone()[0]
    rows = con.execute(f"SELECT path FROM {function}(?, {arguments}) ORDER BY path", [catalog]).fetchall()
    return [path for (path,) in rows]
