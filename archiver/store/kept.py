"""The claim index, kept by the writes that change it: each claim counted once, with its result's citation,
as the view `claim_citations_derived` defines it (`views.claim_citations`), stored in the table `claim_index`
instead of derived on every read (at 10M claims the derivation took 29 s and 7.5 GB for a count).

A write that changes what a result's claims are (a new stored copy of it, a replaced file version, an agent card
naming the agent of its file or directory, a healed row) adds the result's key to `claim_index_pending`, in its
own transaction (`touch`). `refresh` then makes the pending results' rows again from the definition, a batch of
results a transaction, and removes their keys: an ingest refreshes after its last commit, an upgrade after its
migrations. Readers read `claim_citations` (`KEPT`): the index's rows, but a pending result's from the definition,
so an answer never depends on whether a refresh ran, was interrupted or is still to come (a killed ingest, an
archive upgraded from before the index, a lake whose other writer refreshes later).

Each write to the index changes the cited cells in its transaction (`store.cells`). A DuckDB file's index holds
`task_id` first and has an ART index on it (`index_by_task`): one task's claims are found without a scan.

On a lake that several writers share, every writer adds keys (appends never conflict), and a refresh deletes only
the pending rows it read: a key another writer adds meanwhile stays pending for the next refresh. Two refreshes at
once on one lake would delete the same index rows: DuckLake fails the second commit, which is retried.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import duckdb

from . import cells
from .connection import bounded_memory, committed, drop_temporary, transaction
from .tables import CLAIM_INDEX as INDEX
from .tables import CLAIM_INDEX_BY_TASK as BY_TASK
from .tables import CLAIM_INDEX_PENDING as PENDING
from .tables import PENDING_TABLES
from .views import IN_DUCKDB_FILE, INDEXED_CLAIMS, claim_citations

REFRESH_RESULTS = 50_000
"""Results whose rows one refresh transaction makes again at most: bounds its memory (the definition's windows and
joins hold a batch's claims) and the work an interruption loses; each batch scans the claims once."""

REFRESH_CLAIMS = 100_000
"""Claims whose index rows one refresh transaction makes again, about: a batch holds its new index rows and their
cited cells until it commits, about 1.5 kB a claim (at 1.8M results of 10.5 claims each, 50,000 results held
750 MB against a bound of 256 MB and ran out of memory, so every batch after was halved to a few hundred
results); each batch reads the index and the claims once, so fewer batches cost less. The
batch of results is this over the archive's mean claims a stored copy (`refresh`)."""

GROW_AFTER = 8
"""Batches that fit before a batch halved for memory is doubled again (towards the size asked)."""

SMALLEST_BATCH = 1_000
"""The fewest results a batch is halved down to when it runs out of memory (`refreshing`)."""

REFRESH_MEMORY_MB = 384
"""DuckDB's buffer pool while refreshing (it spills beyond). At 256 MB, a 2 GB ingest's claim index refresh left
too little of it for the next kept table's pending keys (1.8M: their count ran out of memory); at 512 MB an
ingest of a 200 MB file peaked at 948 MB (`tests/test_memory.py` holds it under 800 MB)."""

REFRESH_MEMORY_MAX_MB = 3072
"""The most a refresh doubles its buffer pool to (`_Bound`) when a batch of the smallest size still runs out: after
a 2 GB ingest stored its 1.8M results, its process held so much of the bound that 1,000 results' counts did not
fit (a process of its own made them all at 384 MB)."""

INDEX_MEMORY_MB = 1024
"""DuckDB's buffer pool while a DuckDB file's claim index is stored again by task (`index_by_task`)."""


def touch(con: duckdb.DuckDBPyConnection, keys_sql: str, params: list | None = None) -> None:
    """Mark the results whose keys `keys_sql` selects (one column, `result_key`) as pending, in the caller's
    transaction, for every kept table (`PENDING_TABLES`: the claim index, the kept audit): their rows are made
    again by each table's next refresh, and read from the definition until then."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE archiver_touched AS
                    SELECT DISTINCT result_key FROM ({keys_sql}) WHERE result_key IS NOT NULL""",
        params or [],
    )
    for table in PENDING_TABLES:
        con.execute(f"INSERT INTO {table} SELECT result_key FROM archiver_touched")
    con.execute("DROP TABLE archiver_touched")


def touch_cards(con: duckdb.DuckDBPyConnection, cards_sql: str, params: list | None = None) -> None:
    """Mark as pending the results whose agent an agent card may name (`views.with_agent`: a card names the agent
    of its file's results, and of its directory's), for the cards `cards_sql` selects (`source_path`,
    `source_dir`)."""
    touch(
        con,
        f"""SELECT result_key FROM results r
            WHERE r.source_path IN (SELECT source_path FROM ({cards_sql}))
               OR r.source_dir IN (SELECT source_dir FROM ({cards_sql}))""",
        (params or []) * 2,
    )


def index_by_task(con: duckdb.DuckDBPyConnection) -> None:
    """Schema 18 (`migrations.AFTER`): a DuckDB file's claim index stored with `task_id` as its first column, and an
    ART index on it (`tables.CLAIM_INDEX_BY_TASK`): one task's claims are then found by the index instead of a scan
    of every claim (at 100M claims, 0.9 s of reading for 5 claims). DuckDB 1.5 uses an ART index only when the
    filtered column is the first its scan reads, and a scan under a view or a subquery reads the table's columns
    in their order; so `task_id` comes first, and the index is read by name (`views.INDEXED_CLAIMS`). A lake has
    no indexes (DuckLake): its claim index stays as it is."""
    if not con.execute(f"SELECT {IN_DUCKDB_FILE}").fetchone()[0]:
        return
    columns = con.execute(
        """SELECT column_name, data_type, is_nullable FROM duckdb_columns()
           WHERE database_name = current_database() AND schema_name = current_schema() AND table_name = ?
           ORDER BY column_name <> 'task_id', column_index""",
        [INDEX],
    ).fetchall()
    declared = ", ".join(f'"{name}" {kind}{"" if nullable else " NOT NULL"}' for name, kind, nullable in columns)
    with bounded_memory(con, INDEX_MEMORY_MB * 2**20):
        con.execute(f"CREATE TABLE {INDEX}_by_task ({declared})")
        con.execute(f"INSERT INTO {INDEX}_by_task BY NAME SELECT * FROM {INDEX}")
        con.execute(f"DROP TABLE {INDEX}")
        con.execute(f"ALTER TABLE {INDEX}_by_task RENAME TO {INDEX}")
        con.execute(f"CREATE INDEX {BY_TASK} ON {INDEX} (task_id)")


def differing(chosen: str = "SELECT DISTINCT result_key FROM results") -> str:
    """SQL selecting the keys of the results (of those `chosen` selects, not pending) whose index rows are not the
    rows their definition gives: none, in an archive whose index is kept as it should be."""
    among = "result_key IN (SELECT result_key FROM archiver_chosen)"
    return f"""
        WITH archiver_chosen AS MATERIALIZED (
            SELECT result_key FROM ({chosen}) WHERE result_key NOT IN (SELECT result_key FROM {PENDING})),
        kept AS ({INDEXED_CLAIMS} WHERE {among}),
        derived AS ({claim_citations(among)})
        SELECT DISTINCT result_key FROM (
            (SELECT * FROM kept EXCEPT ALL SELECT * FROM derived)
            UNION ALL (SELECT * FROM derived EXCEPT ALL SELECT * FROM kept))"""


def rebuild(con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Make every result's index rows again (`archiver db repair`: what `db check`'s `claim-index` found differing,
    and everything else). Returns how many results the archive holds, each indexed."""
    with transaction(con):
        touch(con, "SELECT DISTINCT result_key FROM results")
    refresh(con, on_batch)  # the keys of removed results are pending too: their rows go
    return con.execute("SELECT count(*) FROM (SELECT DISTINCT result_key FROM results)").fetchone()[0]


def pending(con: duckdb.DuckDBPyConnection, table: str = PENDING, key: str = "result_key") -> int:
    """How many results (`key`s) wait for their rows in a kept table (`table`: its pending list) to be made again
    (a DISTINCT that spills: a `count(DISTINCT)` of 1.8M keys ran out of an ingest's 256 MB)."""
    return con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {key} FROM {table})").fetchone()[0]


Make = Callable[[duckdb.DuckDBPyConnection, str], None]
"""Make a kept table's rows of the results a condition chooses (`result_key IN (...)`) again, in the caller's
transaction: delete theirs, insert their definition's."""


def refresh(
    con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None, batch: int = REFRESH_RESULTS
) -> int:
    """Make the claim index rows of every pending result again (`refreshing`), about `REFRESH_CLAIMS` claims a batch
    (`batch` results at most). Returns how many results."""
    mean = con.execute("SELECT avg(claims) FROM results").fetchone()[0]  # the archive's: a join of the keys costs
    batch = max(SMALLEST_BATCH, min(batch, int(REFRESH_CLAIMS // max(mean or 1.0, 1.0))))
    return refreshing(con, PENDING, _make_index, "the claim index's pending results stay so", on_batch, batch)


def _make_index(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    """The index rows of the results `chosen` chooses made again, and the cited cells with them (`store.cells`)."""

    removing = f"DELETE FROM {INDEX} WHERE {chosen}"
    adding = f"INSERT INTO {INDEX} BY NAME SELECT * FROM ({claim_citations(chosen)})"
    cells.changing(con, chosen, removing, adding)


def add_to_sums(
    con: duckdb.DuckDBPyConnection, table: str, keys: tuple[str, ...], sums: tuple[str, ...], change: str
) -> None:
    """In the caller's transaction: the sums `table` keeps (a row per `keys`, a column per `sums`) changed by the rows
    of `change` (SQL of the same columns: what to add, negative what to take away); a row whose sums all come to 0
    goes. A key the change adds nothing to is not touched."""
    key = " AND ".join(f"k.{name} IS NOT DISTINCT FROM m.{name}" for name in keys)
    grouped = ", ".join(f"m.{name}" for name in keys)
    summed = ", ".join(f"coalesce(any_value(k.{name}), 0) + sum(m.{name}) AS {name}" for name in sums)
    changed = " OR ".join(f"sum(m.{name}) <> 0" for name in sums)
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE sums_merged AS
            SELECT {grouped}, {summed} FROM ({change}) m LEFT JOIN {table} k ON {key}
            GROUP BY {grouped} HAVING {changed}"""
    )
    try:
        con.execute(f"DELETE FROM {table} k WHERE EXISTS (SELECT 1 FROM sums_merged m WHERE {key})")
        kept = " OR ".join(f"{name} <> 0" for name in sums)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM sums_merged WHERE {kept}")
    finally:
        drop_temporary(con, "sums_merged")


def refreshing(
    con: duckdb.DuckDBPyConnection,
    pending_table: str,
    make: Make,
    conflicted: str,
    on_batch: Callable[[int, int], None] | None = None,
    batch: int = REFRESH_RESULTS,
    key: str = "result_key",
    smallest: int = SMALLEST_BATCH,
) -> int:
    """Make the rows of every result (or other `key`) pending in `pending_table` again with `make`, `batch` keys a
    transaction; `on_batch(done, total)` hears of each. Returns how many results were refreshed. The pending keys
    are put in order once (`archiver_queue`), each batch the next of them (a batch chose them anew from every
    pending key: 0.2 s each at 1.8M); keys a writer marks meanwhile are queued when the queue is done. A batch that
    runs out of memory (its results' rows, the threads DuckDB gives it) is rolled back and made again at half the
    size, down to `smallest` keys, and then with twice DuckDB's memory, up to `REFRESH_MEMORY_MAX_MB`; after
    `GROW_AFTER` batches that fit, the size doubles again towards `batch`. An
    interruption keeps what earlier batches did. A commit another writer's refresh got in the way of is retried
    (`committed`); one that still conflicts leaves its results pending (`conflicted` says so), read from the
    definition until a later refresh (`CommitConflictError`)."""
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM {pending_table})").fetchone()[0]:
        return 0
    done, total, size, fitted, bound = 0, 0, batch, 0, _Bound()
    try:
        with bounded_memory(con, bound.bytes):
            while queued := _queued(con, pending_table, key, bound):
                total, at, before = max(total, done + queued), 0, done
                while at < queued:
                    try:
                        made = partial(_refresh_batch, con, pending_table, make, at, size, key)
                        count = committed(con, made, conflicted)
                    except duckdb.OutOfMemoryException:
                        if size > smallest:
                            size, fitted = max(smallest, size // 2), 0  # rolled back: made again at half the size
                        elif not bound.more(con):
                            raise
                        continue
                    at, done, fitted = at + size, done + count, fitted + 1
                    if fitted >= GROW_AFTER and size < batch:
                        size, fitted = min(batch, size * 2), 0
                    if on_batch:
                        on_batch(min(done, total), max(total, done))
                if done == before:  # a whole queue made nothing (another writer made them): what is left stays
                    break
    finally:
        drop_temporary(con, "archiver_refreshed", "archiver_queue")
    return done


class _Bound:
    """DuckDB's memory while refreshing: `REFRESH_MEMORY_MB`, doubled (`more`) when even the smallest work does not
    fit in what the process holds besides (a long ingest's tables), up to `REFRESH_MEMORY_MAX_MB`."""

    def __init__(self) -> None:
        self.bytes = REFRESH_MEMORY_MB * 2**20

    def more(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Twice the memory, if that is within the most; whether it was given."""
        if self.bytes >= REFRESH_MEMORY_MAX_MB * 2**20:
            return False
        self.bytes *= 2
        con.execute(f"SET memory_limit = '{self.bytes}B'")
        return True


def _queued(con: duckdb.DuckDBPyConnection, pending_table: str, key: str, bound: _Bound) -> int:
    """`_queue`, with more memory while it does not fit."""
    while True:
        try:
            return _queue(con, pending_table, key)
        except duckdb.OutOfMemoryException:
            if not bound.more(con):
                raise


def _queue(con: duckdb.DuckDBPyConnection, pending_table: str, key: str) -> int:
    """The keys pending now, in order and numbered from 1 (`archiver_queue`); how many."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE archiver_queue AS
            SELECT {key}, row_number() OVER (ORDER BY {key}) AS n FROM (SELECT DISTINCT {key} FROM {pending_table})"""
    )
    return con.execute("SELECT count(*) FROM archiver_queue").fetchone()[0]


def _refresh_batch(
    con: duckdb.DuckDBPyConnection, pending_table: str, make: Make, at: int, batch: int, key: str = "result_key"
) -> int:
    """In the caller's transaction: make the rows of the `batch` queued keys after the first `at` again (those still
    pending); how many."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE archiver_refreshed AS
            SELECT {key} FROM archiver_queue WHERE n > {int(at)} AND n <= {int(at + batch)}
              AND {key} IN (SELECT {key} FROM {pending_table})"""
    )
    count = con.execute("SELECT count(*) FROM archiver_refreshed").fetchone()[0]
    if count:
        chosen = f"{key} IN (SELECT {key} FROM archiver_refreshed)"
        make(con, chosen)
        con.execute(f"DELETE FROM {pending_table} WHERE {chosen}")
    return count
