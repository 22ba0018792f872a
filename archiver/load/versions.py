"""Which source versions the archive holds: what a listed file is, found in a few queries.

See `archiver.read.version` for the model: a version is its bytes; the same bytes at another path are
an alias; at one path, bytes extending the stored version replace it, other bytes are a new lineage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import duckdb

from ..read.version import SourceVersion, version_key
from ..store.params import STRINGS, strings


@dataclass(frozen=True)
class Latest:
    """The latest version recorded at a path: stored there, or an alias of bytes stored at `stored_at`;
    and the first lineage ever stored at the path (None when it holds aliases only)."""

    sha256: str
    size: int
    lineage: str
    stored_at: str
    first_lineage: str | None


def latest_at(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, Latest]:
    """The latest version recorded at each of `paths` that has one."""
    if not paths:
        return {}
    rows = con.execute(
        f"""
        SELECT path, arg_max(sha256, ingested_at), arg_max(size, ingested_at),
               arg_max(coalesce(lineage, sha256), ingested_at), arg_max(coalesce(alias_of, path), ingested_at),
               arg_min(coalesce(lineage, sha256), ingested_at) FILTER (WHERE alias_of IS NULL)
        FROM sources WHERE list_contains({STRINGS}, path) GROUP BY path""",
        [strings(sorted(set(paths)))],
    ).fetchall()
    return {path: Latest(*values[:2], values[2] or 0, *values[3:]) for path, *values in rows}


def recorded(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple]:
    """(records, container) of the (path, sha256) pairs recorded already, as versions or aliases."""
    if not keys:
        return {}
    rows = con.execute(
        "SELECT path, sha256, any_value(records), any_value(container) FROM sources "
        f"WHERE list_contains({STRINGS}, path) GROUP BY path, sha256",
        [strings(sorted({path for path, _ in keys}))],
    ).fetchall()
    return {(path, sha256): (records, container) for path, sha256, records, container in rows}


def stored_contents(con: duckdb.DuckDBPyConnection, shas: list[str]) -> dict[str, list[dict]]:
    """For each of `shas` stored as a version: the `sources` rows storing it, first stored first (the
    path an alias names)."""
    if not shas:
        return {}
    cursor = con.execute(
        f"""
        SELECT * FROM sources WHERE alias_of IS NULL AND list_contains({STRINGS}, sha256)
        ORDER BY ingested_at, path""",
        [strings(sorted(set(shas)))],
    )
    names = [d[0] for d in cursor.description]
    found: dict[str, list[dict]] = {}
    for row in cursor.fetchall():
        stored = dict(zip(names, row, strict=False))
        found.setdefault(stored["sha256"], []).append(stored)
    return found


def new_version(
    path: str, sha256: str, size: int, head_sha256: str | None, latest: Latest | None, may_extend: bool = True
) -> SourceVersion:
    """The version a file not yet recorded is: an extension of `latest` (the version recorded at its
    path) when its first bytes are that version's, else the first version of a new lineage."""
    first = latest.first_lineage if latest is not None else None
    if latest is None or not may_extend or head_sha256 != latest.sha256:
        return SourceVersion(path, sha256, size, sha256, version_key(path, sha256, first))
    replaces = (latest.stored_at, latest.sha256)
    if latest.stored_at != path:  # the path held an alias: the lineage starts here, the aliased rows give way
        return SourceVersion(path, sha256, size, sha256, version_key(path, sha256, first), replaces)
    return SourceVersion(path, sha256, size, latest.lineage, version_key(path, latest.lineage, first), replaces)


def rotated_from(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, list[Latest]]:
    """For each of `paths`, the latest versions at the paths beside it (same folder) whose names its name
    extends by a suffix after a separator (`app.log` for `app.log.1`, `app.log-20261201`, `app.log_old`),
    longest name first: what a rotated log may continue."""
    wanted: dict[str, list[str]] = {}
    for path in paths:
        folder, name = os.path.split(path)
        ends = [end for end in range(len(name) - 1, 0, -1) if name[end] in _ROTATION_SEPARATORS]
        wanted[path] = [os.path.join(folder, name[:end]) for end in ends]
    found = latest_at(con, sorted({sibling for siblings in wanted.values() for sibling in siblings}))
    return {path: [found[s] for s in siblings if s in found] for path, siblings in wanted.items()}


_ROTATION_SEPARATORS = frozenset(".-_~")


def continued(version: SourceVersion, earlier: Latest) -> SourceVersion:
    """`version`, a new lineage at its path, continuing `earlier` (the latest version at another path, whose
    bytes it begins with): that version's index rows give way, as when a path that held an alias extends it."""
    return replace(version, replaces=(earlier.stored_at, earlier.sha256))
