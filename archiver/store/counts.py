"""The archive's counts, kept by the writes that change them as the claim index is (`store.kept`): what `stats`,
ingest's summary and serve's overview count (results, copies, Parts, citations, claims, tasks; results per day and
agent; the most cited studies, periods, columns and tables), read from a few rows instead of counted over every
stored copy on every read (at 10M claims: 1.2 s for `stats`, 1.5 s more for the overview).

Every count here is a sum over results: what one result adds to it (`result_counts`) depends on its own copies
alone, an origin copy's repeats told apart within the result (`views.copy_unit` names the result). So each
result's part is kept (`result_counts_kept`: a row per kind and name, none where it adds 0), and the sums
(`counts_kept`), which a refresh changes by what it changed: the results it makes again take their old rows out of
the sums and put their new ones in, in one transaction. A distinct count (tasks) is the number of names of its
kind. The definition is `result_counts` over every result, summed (`DEFINITION`); `views.STAT_QUERIES` defines the
same counts over the stored copies, and the tests hold the three equal.

A write marks what it touches pending (`store.kept.touch`, `counts_pending` among `PENDING_TABLES`); until a
refresh, a pending result's part is derived from its copies (`read`), so an answer never depends on whether a
refresh ran. Two refreshes at once on one lake change the same sums: DuckLake fails the second commit, which is
retried (`store.kept.refreshing`).
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

from . import kept
from .connection import drop_temporary, transaction
from .tables import COUNTS, COUNTS_PENDING, RESULT_COUNTS
from .views import PART_IDENTITY, STAT_QUERIES, copy_unit, with_agent

PER_RESULT = (
    "results", "copies", "origin_copies", "results_with_origin", "parts", "parts_undecoded", "citations",
    "citations_inferred", "citations_invalid", "claims",
)  # fmt: skip
"""The kinds that are a sum over results, each named as `views.STAT_QUERIES` names the count."""

DISTINCT = ("tasks",)
"""The counts of distinct names, a kind each named as `views.STAT_QUERIES` names it (a result adds each of its
task ids once)."""

SUBJECTS = {"study": "study", "period": "period", "column": "source_column", "table": "source_table"}
"""The subjects counted by the results citing them (serve's most cited): the kind, and the citations' column."""

DAY = "day"
"""Results per day (of their copies' times) and agent (`name`; a copy without an agent: '(no agent)')."""

NO_AGENT = "(no agent)"

REFRESH_RESULTS = 200_000
"""Results whose counts one refresh transaction makes again: each batch reads its results' copies, Parts,
citations and claims once (narrowed to its results)."""


def result_counts(chosen: str) -> str:
    """SQL of what each result `chosen` chooses (a condition on `result_key`) adds to each count: `result_key`,
    `kind`, `name` (of a distinct count or subject; else NULL), `day` (of `DAY`; else NULL), `n` (never 0). A
    count of rows is, as `views.STAT_QUERIES` counts it, every row less the repeats within origin copies."""
    unit = copy_unit()

    def rows(table: str, counts: dict[str, str]) -> str:  # every row of the results chosen, by result
        return f"""SELECT result_key, {", ".join(f"count(*) FILTER (WHERE {w}) AS {k}" for k, w in counts.items())}
                   FROM {table} WHERE {chosen} GROUP BY result_key"""

    def repeats(placed: str, identity: str, counts: dict[str, str]) -> str:  # an origin copy's repeats, by result
        each = ", ".join(
            f"count(*) FILTER (WHERE {w}) - count(DISTINCT ({unit}, {identity})) FILTER (WHERE {w}) AS {k}"
            for k, w in counts.items()
        )
        return f"SELECT r.result_key, {each} FROM {placed} WHERE r.origin IS NOT NULL GROUP BY r.result_key"

    parts = {"parts": "TRUE", "parts_undecoded": "p.kind = 'unknown'"}
    citations = {"citations": "TRUE", "citations_inferred": "c.inferred", "citations_invalid": "NOT c.valid"}
    claims = {"claims": "TRUE"}
    chosen_parts = f"(SELECT * FROM parts WHERE {chosen}) p"
    copies = ("results", "copies", "origin_copies", "results_with_origin")
    counted = [
        (rows("parts p", parts), parts, 1),
        (repeats(f"{chosen_parts} JOIN results r ON r.copy_id = p.copy_id", PART_IDENTITY, parts), parts, -1),
        (rows("citations c", citations), citations, 1),
        (repeats(f"(SELECT * FROM citations WHERE {chosen}) c JOIN parts p ON p.part_id = c.part_id "
                 "JOIN results r ON r.copy_id = p.copy_id", PART_IDENTITY, citations), citations, -1),
        (rows("claims c", claims), claims, 1),
        (repeats(f"(SELECT * FROM claims WHERE {chosen}) c JOIN results r ON r.copy_id = c.copy_id",
                 "c.content_hash, c.pointer", claims), claims, -1),
        (f"""SELECT result_key, 1 AS results,
                    count(*) FILTER (WHERE r.origin IS NULL)
                    + count(DISTINCT {unit}) FILTER (WHERE r.origin IS NOT NULL) AS copies,
                    count(DISTINCT r.origin) AS origin_copies,
                    CAST(bool_or(r.origin IS NOT NULL) AS INTEGER) AS results_with_origin
             FROM results r WHERE {chosen} GROUP BY result_key""", copies, 1),
    ]  # fmt: skip
    sums = " UNION ALL ".join(
        f"SELECT result_key, kind, {sign} * CAST(n AS BIGINT) AS n FROM ({sql}) "
        f"UNPIVOT (n FOR kind IN ({', '.join(kinds)}))"
        for sql, kinds, sign in counted
    )
    subjects = " UNION ALL ".join(
        f"SELECT DISTINCT result_key, '{kind}', {column}, NULL::DATE, 1 FROM citations "
        f"WHERE {chosen} AND {column} IS NOT NULL"
        for kind, column in SUBJECTS.items()
    )
    return f"""
        SELECT result_key, kind, NULL AS name, NULL::DATE AS day, sum(n) AS n FROM ({sums})
        GROUP BY result_key, kind HAVING sum(n) <> 0
        UNION ALL SELECT DISTINCT result_key, 'tasks', task_id, NULL::DATE, 1 FROM results
                  WHERE {chosen} AND kind = 'task' AND task_id IS NOT NULL
        UNION ALL {subjects}
        UNION ALL SELECT DISTINCT result_key, '{DAY}', coalesce(agent, '{NO_AGENT}'), CAST(timestamp AS DATE), 1
                  FROM ({with_agent(f"SELECT * FROM results WHERE {chosen}")}) WHERE timestamp IS NOT NULL"""


DEFINITION = f"SELECT kind, name, day, sum(n) AS n FROM ({result_counts('TRUE')}) GROUP BY ALL"
"""Every count over the whole archive, from its copies: what `counts_kept` keeps."""


def refresh(con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Make the counts of every pending result again, and the sums with them (`store.kept.refreshing`). Returns
    how many results."""
    try:
        return kept.refreshing(con, COUNTS_PENDING, _make, "the counts' pending results stay so", on_batch,
                               REFRESH_RESULTS)  # fmt: skip
    finally:
        drop_temporary(con, "counts_made")


def _make(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    """In the caller's transaction: the rows of the results `chosen` chooses made again, the sums changed by the
    difference."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE counts_made AS {result_counts(chosen)}")
    change = f"""SELECT kind, name, day, -n AS n FROM {RESULT_COUNTS} WHERE {chosen}
                 UNION ALL SELECT kind, name, day, n FROM counts_made"""
    kept.add_to_sums(con, COUNTS, ("kind", "name", "day"), ("n",), change)
    con.execute(f"DELETE FROM {RESULT_COUNTS} WHERE {chosen}")
    con.execute(f"INSERT INTO {RESULT_COUNTS} SELECT result_key, kind, name, day, n FROM counts_made")


def current(con: duckdb.DuckDBPyConnection) -> str:
    """SQL of every count as of now (`kind`, `name`, `day`, `n`): the sums kept, and where results are pending, their
    kept rows taken out and their rows derived from their copies put in."""
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM {COUNTS_PENDING})").fetchone()[0]:
        return f"SELECT kind, name, day, n FROM {COUNTS}"
    pending = f"result_key IN (SELECT result_key FROM {COUNTS_PENDING})"
    return f"""
        SELECT kind, name, day, sum(n) AS n FROM (
            SELECT kind, name, day, n FROM {COUNTS}
            UNION ALL SELECT kind, name, day, -n FROM {RESULT_COUNTS} WHERE {pending}
            UNION ALL SELECT kind, name, day, n FROM ({result_counts(pending)}))
        GROUP BY ALL HAVING sum(n) <> 0"""


def stats(con: duckdb.DuckDBPyConnection, names: tuple[str, ...] = tuple(STAT_QUERIES)) -> dict[str, int]:
    """The counts `views.STAT_QUERIES` defines, of `names` (default all, in its order): those that are sums over
    results (`PER_RESULT`, `DISTINCT`) from the kept sums, the rest (records, cards, errors: one table each) counted."""
    kept_names = [name for name in names if name in PER_RESULT or name in DISTINCT]
    found: dict[str, int] = {}
    if kept_names:
        kinds = ", ".join(f"'{name}'" for name in kept_names)
        distinct = ", ".join(f"'{kind}'" for kind in DISTINCT)
        rows = con.execute(
            f"""SELECT kind, CASE WHEN kind IN ({distinct}) THEN count(*) ELSE sum(n) END
                FROM ({current(con)}) WHERE kind IN ({kinds}) GROUP BY kind"""
        ).fetchall()
        by_kind = {kind: int(n) for kind, n in rows}
        found = {name: by_kind.get(name, 0) for name in kept_names}
    counted = [name for name in names if name not in found]
    if counted:
        row = con.execute("SELECT " + ", ".join(f"({STAT_QUERIES[name]})" for name in counted)).fetchone()
        found.update(zip(counted, row, strict=True))
    return {name: found[name] for name in names}


def most_cited(con: duckdb.DuckDBPyConnection, kind: str, limit: int) -> list[dict]:
    """The `limit` names of a subject (`SUBJECTS`) cited by the most results, most first (ties by name)."""
    rows = con.execute(
        f"SELECT name, n FROM ({current(con)}) WHERE kind = ? ORDER BY n DESC, name LIMIT {int(limit)}", [kind]
    ).fetchall()
    return [{"name": name, "results": n} for name, n in rows]


def results_per_day(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Results per day and agent, each result counted once a day and agent, by day then agent."""
    rows = con.execute(f"SELECT day, name, n FROM ({current(con)}) WHERE kind = '{DAY}' ORDER BY day, name").fetchall()
    return [{"day": day, "agent": agent, "results": n} for day, agent, n in rows]


def differing(chosen: str = "SELECT DISTINCT result_key FROM results") -> str:
    """SQL selecting the keys of the results (of those `chosen` selects, not pending) whose kept counts are not their
    definition's: none, in an archive whose counts are kept as they should be."""
    among = "result_key IN (SELECT result_key FROM counts_chosen)"
    return f"""
        WITH counts_chosen AS MATERIALIZED (
            SELECT result_key FROM ({chosen}) WHERE result_key NOT IN (SELECT result_key FROM {COUNTS_PENDING})),
        kept AS (SELECT result_key, kind, name, day, n FROM {RESULT_COUNTS} WHERE {among}),
        made AS ({result_counts(among)})
        SELECT DISTINCT result_key FROM ((SELECT * FROM kept EXCEPT ALL SELECT * FROM made)
                                         UNION ALL (SELECT * FROM made EXCEPT ALL SELECT * FROM kept))"""


SUMS_DIFFERING = f"""
    WITH summed AS (SELECT kind, name, day, sum(n) AS n FROM {RESULT_COUNTS} GROUP BY ALL HAVING sum(n) <> 0),
    sums AS (SELECT kind, name, day, n FROM {COUNTS})
    SELECT kind || coalesce(' ' || name, '') || coalesce(' ' || day, '') || ': ' || coalesce(max(n), 0)
           || ' kept, ' || coalesce(min(n), 0) || ' summed'
    FROM ((SELECT *, 1 AS side FROM sums EXCEPT ALL SELECT *, 1 FROM summed)
          UNION ALL (SELECT *, 2 FROM summed EXCEPT ALL SELECT *, 2 FROM sums))
    GROUP BY kind, name, day"""
"""The kept sums (`counts_kept`) that are not the sums of the results' kept rows, one line each: none, when kept as
they should be."""


def rebuild(con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Make every count again from the copies (`archiver db repair`): the rows and sums emptied, every result
    pending (read from its copies meanwhile), then refreshed. Returns how many results."""
    with transaction(con):
        con.execute(f"DELETE FROM {RESULT_COUNTS}")
        con.execute(f"DELETE FROM {COUNTS}")
        con.execute(f"DELETE FROM {COUNTS_PENDING}")
        con.execute(f"INSERT INTO {COUNTS_PENDING} SELECT DISTINCT result_key FROM results")
    return refresh(con, on_batch)
