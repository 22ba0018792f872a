"""Write source files' rows: each file lands whole or not at all.

Several files may share one transaction (a commit costs an fsync and may checkpoint), but a file
is never split across transactions; if a shared transaction fails, its files are written again one
transaction each, so only the file at fault is lost to the error.

Each transaction writes its files' `sources` rows last: they are the commit marker (see `store.heal`).

On a lake that several writers share, a commit may conflict with another writer's (DuckLake checks
at commit, the catalog database may be busy): the transaction is retried with exponential backoff.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ..read.version import SourceVersion
from ..store import kept
from ..store.connection import committed
from ..store.params import STRINGS, strings
from ..store.tables import CHUNKED_COLUMNS, CHUNKS_TABLE, INDEX_TABLES
from .chunks import Split
from .versions import stored_contents

DERIVED = INDEX_TABLES[1:]
T = TypeVar("T")
SOURCE_COLUMNS = (
    "path",
    "sha256",
    "size",
    "container",
    "compression",
    "records",
    "quarantined",
    "recognised",
    "ingested_at",
    "lineage",
    "alias_of",
)


Step = Callable[[str], None]
"""Told what a commit is doing now ("writing claims", "the commit"), for a person watching."""


def write_files(
    con: duckdb.DuckDBPyConnection,
    files: list,
    on_retry: Callable[[Exception], None] | None = None,
    on_step: Step | None = None,
) -> list[int | str]:
    """Write prepared files (each with `.tables`, `.source_row` and `.version`) in one transaction;
    returns how many (non-filler) records each added, or, for bytes that another writer stored first,
    the path they are stored at (for another path than the file's, the file is recorded as its alias).
    Falls back to one transaction per file on failure; `on_retry` hears of each commit retry, `on_step` of
    each table written and of the commit."""
    if len(files) > 1:
        try:
            return _retried_files(con, files, on_retry, on_step)
        except duckdb.InterruptException:
            raise
        except duckdb.Error:
            pass
    return [count for prepared in files for count in _retried_files(con, [prepared], on_retry, on_step)]


def _retried_files(
    con: duckdb.DuckDBPyConnection, files: list, on_retry: Callable | None, on_step: Step | None
) -> list[int | str]:
    paths = [prepared.source_row["path"] for prepared in files]
    return _retried(con, lambda: _write(con, files, on_step or _quiet), paths, on_retry)


def _quiet(step: str) -> None:
    """No one to tell of a commit's steps."""


def _retried(con: duckdb.DuckDBPyConnection, write: Callable[[], T], paths: list[str], on_retry: Callable | None) -> T:
    """`write()` in a transaction (`committed`), then the `commit` step of the crash tests."""
    done = committed(con, write, f"nothing stored of: {', '.join(paths)}; ingest again", on_retry)
    reached("commit")
    return done


def write_aliases(
    con: duckdb.DuckDBPyConnection, rows: list[dict], on_retry: Callable[[Exception], None] | None = None
) -> None:
    """Record paths holding bytes stored already at another path (`alias_row`s), in one transaction."""
    if rows:
        _retried(con, lambda: insert_sources(con, rows), [row["path"] for row in rows], on_retry)


KILL_AT = "ARCHIVER_KILL_AT"
"""Fault injection for crash tests: the write step after which the process kills itself with SIGKILL
(`records`, `index`, `sources` or `commit`), so that a test lands a kill inside each step, not by timing."""


def reached(step: str) -> None:
    if os.environ.get(KILL_AT) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _write(con: duckdb.DuckDBPyConnection, files: list, on_step: Step) -> list[int | str]:
    """Write the files' rows, their `sources` rows last: those are the commit marker, so a version whose
    `sources` row is missing was never committed, whatever else of it a crash left behind."""
    stored = stored_contents(con, [prepared.version.sha256 for prepared in files])
    results: list[tuple[object, str | None]] = []
    to_write, aliases = [], []
    for prepared in files:
        version = prepared.version
        paths = [row["path"] for row in stored.get(version.sha256, [])]
        first_path = version.path if version.path in paths else paths[0] if paths and version.size else None
        if first_path is None:
            to_write.append(prepared)
        elif first_path != version.path:
            aliases.append(alias_row(prepared.source_row, first_path))
        results.append((prepared, first_path))
    replaced = [p.version.replaces for p in to_write if p.version.replaces]
    if replaced:
        paths, versions = strings(sorted({path for path, _ in replaced})), strings(f"{p}\x1f{r}" for p, r in replaced)
        of_replaced = (
            f"WHERE list_contains({STRINGS}, source_path) "
            f"AND list_contains({STRINGS}, source_path || chr(31) || source_sha256)"
        )
        kept.touch(con, f"SELECT result_key FROM results {of_replaced}", [paths, versions])
        kept.touch_cards(con, f"SELECT source_path, source_dir FROM agent_cards {of_replaced}", [paths, versions])
        for name in DERIVED:
            con.execute(f"DELETE FROM {name} {of_replaced}", [paths, versions])
    counts: dict[int, int] = {}
    pending = _Pending(con, on_step)
    for tables, sharing in _by_batches(to_write):
        if getattr(tables, "files", 1) > 1:  # small files' shared batches
            _add_shared(pending, tables, sharing, counts)
            continue
        prepared, count = sharing[0], 0
        for name, table in tables:
            if name == "records" and prepared.version.extends_here:
                count += _insert_records(con, prepared.version, table)
            else:
                count += _new_records(table) if name == "records" else 0
                pending.add(name, table)
        counts[id(prepared)] = count
    pending.flush()  # the records first (the `records` step), then the derived tables (`index`)
    pending.touch()
    insert_sources(con, [prepared.source_row for prepared in to_write] + aliases)
    reached("sources")
    on_step("the commit")
    return [counts[id(prepared)] if first_path is None else first_path for prepared, first_path in results]


def _by_batches(files: list) -> list[tuple[object, list]]:
    """The files grouped by the batches they share (small files prepared together), in order."""
    groups: dict[int, tuple[object, list]] = {}
    for prepared in files:
        groups.setdefault(id(prepared.tables), (prepared.tables, []))[1].append(prepared)
    return list(groups.values())


def _add_shared(pending: _Pending, tables, sharing: list, counts: dict[int, int]) -> None:
    """Add the rows of `sharing`, some or all of the files whose rows `tables` holds, and count the new
    records of each file."""
    keys = {(p.version.path, p.version.sha256): id(p) for p in sharing}
    chosen = pa.array([f"{path}\x1f{sha256}" for path, sha256 in keys]) if len(sharing) < tables.files else None
    for key in keys.values():
        counts[key] = 0
    for name, table in tables:
        if chosen is not None or name == "records":
            of_file = pc.binary_join_element_wise(
                table.column("source_path").cast(pa.string()), table.column("source_sha256").cast(pa.string()), "\x1f"
            )
            if chosen is not None:
                mask = pc.is_in(of_file, chosen)
                table, of_file = table.filter(mask), of_file.filter(mask)
            if name == "records":
                new = pc.value_counts(of_file.filter(pc.not_equal(table.column("kind"), "filler")))
                for entry in new.to_pylist():
                    counts[keys[tuple(entry["values"].rsplit("\x1f", 1))]] += entry["counts"]
        pending.add(name, table)


def alias_row(row: dict, first_path: str) -> dict:
    """The `sources` row of a path holding bytes stored already at `first_path`."""
    return {**row, "alias_of": first_path}


SOURCES_SCHEMA = pa.schema(
    [
        (
            name,
            pa.int64()
            if name in ("size", "records", "quarantined", "recognised")
            else pa.timestamp("us", tz="UTC")
            if name == "ingested_at"
            else pa.string(),
        )
        for name in SOURCE_COLUMNS
    ]
)


def insert_sources(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """The `sources` rows, in one insert (one row at a time cost more than the rest of a small file)."""
    if rows:
        columns = {name: [row[name] for row in rows] for name in SOURCE_COLUMNS}
        _insert(con, "sources", pa.table(columns, schema=SOURCES_SCHEMA))


PENDING_BYTES = 32 * 2**20
"""Batches of small files gathered into one insert per table (an insert has a fixed cost)."""


class _Pending:
    """Batches waiting to be inserted, a few MiB at a time: a large file's batches go in as they come,
    small files' batches together (an insert has a fixed cost: one per small file took more than the
    rest of its work). The records go in first."""

    def __init__(self, con: duckdb.DuckDBPyConnection, on_step: Step) -> None:
        self.con, self.on_step = con, on_step
        self.tables: dict[str, list[pa.Table]] = {"records": []}
        self.bytes = 0
        self.results: set[str] = set()  # the keys of the results given a stored copy
        self.cards: list[pa.Table] = []  # where the agent cards stored sit

    def add(self, name: str, table: pa.Table) -> None:
        if name == "results":
            self.results.update(table.column("result_key").to_pylist())
        elif name == "agent_cards" and table.num_rows:
            self.cards.append(table.select(["source_path", "source_dir"]))
        self.tables.setdefault(name, []).append(table)
        self.bytes += table.get_total_buffer_size()
        if self.bytes >= PENDING_BYTES:
            self.flush()

    def flush(self) -> None:
        for name, tables in self.tables.items():
            if tables:
                self.on_step(f"writing {name}")
                _insert(self.con, name, pa.concat_tables(tables, promote_options="permissive"))
            if name == "records":
                reached("records")
        reached("index")
        self.tables = {"records": []}
        self.bytes = 0

    def touch(self) -> None:
        """Mark the results written, and those whose agent a card written may name, pending in the claim index
        (`store.kept`)."""
        if self.results:
            kept.touch(self.con, f"SELECT unnest({STRINGS}) AS result_key", [strings(sorted(self.results))])
        if self.cards:
            cards = pa.concat_tables(self.cards)
            paths = strings(sorted(set(cards.column("source_path").to_pylist())))
            dirs = strings(sorted(set(cards.column("source_dir").to_pylist())))
            kept.touch_cards(
                self.con, f"SELECT unnest({STRINGS}) AS source_path, unnest({STRINGS}) AS source_dir", [paths, dirs]
            )


def _new_records(table: pa.Table) -> int:
    """How many records of a batch of `records` rows are not filler."""
    return table.num_rows - table.column("kind").to_pylist().count("filler")


def _insert_records(con: duckdb.DuckDBPyConnection, version: SourceVersion, table: pa.Table) -> int:
    """Insert a batch of a file's records; for a version extending one stored at its path, the records
    stored already are left out (their ids are the same: one lineage hashes ids with one key)."""
    if version.extends_here:
        ids = table.column("record_id")
        stored = con.execute(
            f"SELECT record_id FROM records WHERE source_path = ? AND list_contains({STRINGS}, record_id)",
            [version.path, strings(ids.to_pylist())],
        ).fetchall()
        if stored:
            table = table.filter(pc.invert(pc.is_in(ids, pa.array([i for (i,) in stored], pa.string()))))
    _insert(con, "records", table)
    return _new_records(table)


def _insert(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Insert an Arrow batch into table `name`, its columns matched by name. Through a relation, not a
    registered view: a view registered and dropped inside a transaction keeps its batch alive until the
    commit, so every batch of a large file would stay in memory."""
    if name in CHUNKED_COLUMNS:
        split = Split()
        table = split.table(name, table)
        if split.values:
            _insert_chunks(con, split)
    columns = [duckdb.ColumnExpression(column) for column in con.table(name).columns]
    con.from_arrow(table).select(*columns).insert_into(name)


def _insert_chunks(con: duckdb.DuckDBPyConnection, split: Split) -> None:
    """The chunks of the values a batch moved out of their cells, but for values stored already."""
    stored = con.execute(
        f"SELECT DISTINCT value_sha256 FROM {CHUNKS_TABLE} WHERE value_sha256 IN (SELECT unnest({STRINGS}))",
        [strings(split.values)],
    ).fetchall()
    for chunks in split.chunks({digest for (digest,) in stored}):
        _insert(con, CHUNKS_TABLE, chunks)
