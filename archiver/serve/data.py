"""What each page of `archiver serve` shows, asked of the archive with the commands' own queries.

Every list is one page of rows (LIMIT and OFFSET) with the exact count of the whole list and its
facets, aggregates over the whole list in the same query, so no page sends a whole table out, however
large the archive. Rows carry the field names of the CLI's
`--format json`: the lineage queries' (`archiver.query.lineage`), the audit's findings
(`archiver.audit.report.PUBLISHED_FIELDS`) and verify's verdicts (`CitationVerdict`).

What the whole archive must be read for (its counts, the audit's findings, the results per day) is
worked out once per state of the archive (`Snapshots`) and kept until a commit changes it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import types
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from ..audit.report import PUBLISHED_FIELDS
from ..audit.rules import RULES
from ..audit.run import audited
from ..defaults import MIN_BASE
from ..query import lineage
from ..query.output import stream
from ..query.selection import Selection
from ..store import cells, counts, views
from ..store.connection import transaction
from ..verify.run import CitationVerdict

PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
LAST_PAGE = 2**31
"""The highest page asked for that is read as asked (an offset DuckDB can take); a higher one is read as it."""
SMALL_BASE = MIN_BASE
"""A citation whose base n is below this is listed as small (as the audit's `small-base` default)."""
SELECTION_FIELDS = tuple(f.name for f in fields(Selection))
LISTS = ("claims", "citations", "impact")
FACET_VALUES = 8
"""Values shown per facet, the most frequent first."""


@dataclass
class FacetCounts:
    """How many rows of a whole list hold each value of a facet: `values` are the `FACET_VALUES` most
    frequent keys (the facet's fields, the value first and what tells two of one name apart after it) with
    their rows; `distinct` is how many keys there are in all."""

    keys: tuple[str, ...]
    values: list[tuple[tuple, int]]
    distinct: int
    without: int = 0  # rows without a value (left out of the facet)

    @property
    def truncated(self) -> bool:
        return self.distinct > len(self.values)


@dataclass
class Page:
    """One page of a list: its rows, how many rows the whole list has, where the page starts, and the
    facets of the whole list (`FacetCounts`)."""

    fields: tuple[str, ...]
    rows: list[dict]
    total: int
    page: int
    size: int
    facets: dict[str, FacetCounts] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    def as_dict(self) -> dict:
        return {"rows": self.rows, "count": self.total, "page": self.page, "page_size": self.size}


def page_bounds(page: int, size: int) -> tuple[int, int]:
    """The page (from 1 to `LAST_PAGE`) and page size (1 to `MAX_PAGE_SIZE`) nearest those asked for."""
    return max(1, min(int(page), LAST_PAGE)), max(1, min(int(size), MAX_PAGE_SIZE))


def paged(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list,
    fields_: tuple[str, ...],
    page: int,
    size: int,
    facets: dict[str, tuple[str, ...]] | None = None,
    windowed: str | None = None,
    weighted: str | None = None,
) -> Page:
    """Rows `page` (from 1) of `sql`, `size` a page, with the exact count of its rows and its `facets`
    (name: the fields a value is keyed by, its own first), each an aggregate over every row of `sql`
    (the `FACET_VALUES` most frequent keys, a NULL value left out), in one transaction: the page's rows
    asked of `windowed` (`sql` with `{window}` where its LIMIT and OFFSET go, before what a page's rows alone
    need: `lineage.claims`' verdicts) or of `sql`, the count and facets of the keys alone (a sort or a join of
    every row's every column cost a column's page 1.4 s at 10M claims), or summed over `weighted` (the same rows
    as fewer, each with its `weight`: `lineage.Query.weighted`; the count and facets of a column's 2.2M claims of
    100M took 7 s counted, a few ms summed from the kept cells)."""
    page, size = page_bounds(page, size)
    facets = facets or {}
    window = f"LIMIT {size} OFFSET {(page - 1) * size}"
    rows_sql = windowed.format(window=window) if windowed else f"SELECT * FROM ({sql}) {window}"
    keys = list(dict.fromkeys(key for keyed in facets.values() for key in keyed))
    rows_of = "CAST(sum(serve_weight) AS BIGINT)" if weighted else "count(*)"
    faceted = "".join(
        f"""
        UNION ALL BY NAME
        SELECT * FROM (SELECT '{name}' AS serve_facet,
                              {", ".join(f'CAST("{key}" AS VARCHAR) AS serve_k{i}' for i, key in enumerate(keyed))},
                              {rows_of} AS serve_n, count(*) OVER () AS serve_distinct,
                              sum({rows_of}) OVER () AS serve_valued
                       FROM q WHERE "{keyed[0]}" IS NOT NULL GROUP BY ALL
                       ORDER BY serve_n DESC, {", ".join(f"serve_k{i}" for i in range(len(keyed)))}
                       LIMIT {FACET_VALUES})"""
        for name, keyed in facets.items()
    )
    projected = ", ".join([*(f'"{key}"' for key in keys), "weight AS serve_weight" if weighted else "1 AS serve_row"])
    counted = f"""
        WITH q AS MATERIALIZED (SELECT {projected} FROM ({weighted or sql}))
        SELECT coalesce({rows_of}, 0) AS serve_total FROM q{faceted}"""
    with transaction(con, commit=False):
        shown = list(stream(con.execute(rows_sql, params)))
        rows = list(stream(con.execute(counted, params)))
    total = next(row["serve_total"] for row in rows if row["serve_total"] is not None)
    facet_counts = {name: FacetCounts(keyed, [], 0, total) for name, keyed in facets.items()}
    for row in rows:
        if row.get("serve_facet") is not None:
            facet = facet_counts[row["serve_facet"]]
            facet.values.append((tuple(row[f"serve_k{i}"] for i in range(len(facet.keys))), row["serve_n"]))
            facet.distinct = row["serve_distinct"]
            facet.without = total - int(row["serve_valued"])
    for facet in facet_counts.values():
        facet.values.sort(key=lambda item: (-item[1], tuple(key or "" for key in item[0])))
    return Page(fields_, [{f: row.get(f) for f in fields_} for row in shown], total, page, size, facet_counts)


def lineage_page(
    con, kind: str, selection: Selection, order_by: str | None, page: int, size: int, facets: dict | None = None
) -> Page:
    """A page of `archiver query KIND` with the same selection and order."""
    query = lineage.QUERIES[kind](selection, order_by=order_by)
    weighted = query.weighted and query.weighted.replace("{cells}", cells.source(con))
    return paged(con, query.sql, query.params, query.fields, page, size, facets, query.windowed, weighted)


# The archive as of one commit: its counts, the audit's findings, results per day.


def generation(location) -> tuple | None:
    """What changes when a commit lands in a DuckDB file (its size and time, and its WAL's); None for a
    lake, whose state is asked again after `LAKE_SECONDS`."""
    if location.is_lake:
        return None
    out = []
    for path in (location.catalog_path, location.catalog_path + ".wal"):
        try:
            stat = os.stat(path)
            out.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


LAKE_SECONDS = 10.0

_PUBLISHED = ", ".join(PUBLISHED_FIELDS)
_SHOWN = f"{_PUBLISHED}, {', '.join(views.PLACES)}"


def _placed(findings: str) -> str:
    """The published fields of the findings in the table `findings`, with their places (`views.placed`)."""
    return views.placed(f"SELECT {_PUBLISHED} FROM {findings}", f"r.result_key IN (SELECT result_key FROM {findings})")


@dataclass
class Snapshot:
    """What the overview needs of the whole archive, as of one state of it."""

    stats: dict[str, int]
    summary: dict
    findings: pa.Table  # the findings not read from the kept audit (all when `kept` is None), with their places
    results_per_day: list[dict]
    subjects: dict[str, list[dict]]  # the most cited studies, periods, columns and tables (name, results citing it)
    kept: str | None = None  # the SQL of the kept findings, with their places (`Audit.kept`)
    made: float = field(default_factory=time.monotonic)
    seconds: float = 0.0


class Snapshots:
    """One `Snapshot` per state of the archive, made when a request first needs it after a commit, and
    the answers of costly questions (a study's claims by period) asked in that state (`Answers`)."""

    def __init__(self, budget: int | None = None) -> None:
        self._lock = threading.Lock()
        self._making = threading.Lock()
        self._key: tuple | None = None
        self._snapshot: Snapshot | None = None
        self._memo = Answers(ANSWERS_BUDGET if budget is None else budget)
        self._memo_key: tuple | None = None
        self._memo_made = 0.0
        self._asking: dict[tuple, threading.Lock] = {}  # the questions being worked out

    @property
    def answers(self) -> Answers:
        return self._memo

    def get(self, archive) -> Snapshot:
        key = generation(archive.location)
        with self._making:  # not `_lock`: the answers kept stay readable while a snapshot is made
            current = self._snapshot
            fresh = current is not None and (
                (key is not None and key == self._key)
                or (key is None and time.monotonic() - current.made < LAKE_SECONDS)
            )
            if not fresh:
                started = time.monotonic()
                current = snapshot(archive)
                current.seconds = time.monotonic() - started
                self._key, self._snapshot = key, current
            return current

    def remembered(self, archive, question: tuple, make):
        """`make()`'s answer to `question`, worked out once per state of the archive (requests asking the
        same question meanwhile wait for that one answer)."""
        key = generation(archive.location)
        with self._lock:
            if key != self._memo_key or (key is None and time.monotonic() - self._memo_made > LAKE_SECONDS):
                self._memo.clear()
                self._memo_key, self._memo_made = key, time.monotonic()
            if question in self._memo:
                return self._memo.get(question)
            asking = self._asking.setdefault((key, question), threading.Lock())
        with asking:
            with self._lock:
                if key == self._memo_key and question in self._memo:
                    return self._memo.get(question)
            try:
                answer = make()
            finally:
                with self._lock:
                    self._asking.pop((key, question), None)
            size = footprint(answer, self._memo.largest + 1)  # outside the lock: others are served meanwhile
            with self._lock:
                if key == self._memo_key:
                    self._memo.put(question, answer, size)
        return answer


ANSWERS_BUDGET = 64 * 2**20
"""Bytes of answers kept per state of the archive (as `footprint` counts them)."""


class Answers:
    """Answers to questions, the least recently asked dropped first once they hold more than `budget`
    bytes; an answer larger than half the budget is not kept (it would push out all the others)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.bytes = 0
        self._kept: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()

    @property
    def largest(self) -> int:
        return self.budget // 2

    def __contains__(self, question: tuple) -> bool:
        return question in self._kept

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, question: tuple) -> Any:
        self._kept.move_to_end(question)
        return self._kept[question][0]

    def put(self, question: tuple, answer: Any, size: int) -> None:
        if question in self._kept or size > self.largest:
            return
        self._kept[question] = (answer, size)
        self.bytes += size
        while self.bytes > self.budget:
            _, (_, dropped) = self._kept.popitem(last=False)
            self.bytes -= dropped

    def clear(self) -> None:
        self._kept.clear()
        self.bytes = 0


def footprint(value: Any, enough: int | None = None) -> int:
    """The bytes `value` holds in memory: its own and those of everything it refers to, each object once
    (containers, dataclasses and objects with a `__dict__` are walked); counted only until `enough`."""
    seen: set[int] = set()
    pending = [value]
    total = 0
    while pending and (enough is None or total < enough):
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending += item
        elif isinstance(item, pa.Table):
            total += item.nbytes
        elif hasattr(item, "__dict__") and not isinstance(item, (type, types.ModuleType)):
            pending.append(vars(item))
        elif hasattr(item, "__slots__"):
            pending += [getattr(item, name) for name in item.__slots__ if hasattr(item, name)]
    return total


def snapshot(archive) -> Snapshot:
    con = archive.con
    stats = archive.stats()
    with audited(con, list(RULES), Selection()) as audit:  # the kept findings are read where they are kept
        findings = con.execute(_placed("audit_derived" if audit.kept else "audit_findings")).to_arrow_table()
        summary, kept = audit.summary, audit.kept
    days = [{**row, "day": row["day"].isoformat()} for row in counts.results_per_day(con)]
    subjects = {kind: counts.most_cited(con, kind, SUBJECTS_SHOWN) for kind in counts.SUBJECTS}
    return Snapshot(stats, summary, findings, days, subjects, kept)


SUBJECTS_SHOWN = 30
"""The most cited of each subject (study, period, column, table) shown: by the results citing it, each counted
once (`store.counts`)."""


def verdict_counts(con) -> dict[str, int]:
    rows = con.execute("SELECT verdict, count(*) FROM latest_verdicts GROUP BY ALL ORDER BY 1").fetchall()
    return dict(rows)


# Findings, filtered as `archiver audit` filters them: rules, and the copy's agent, task, time, file.

FINDING_FILTERS = ("agent", "task", "since", "until", "source")


def findings_page(
    con, snap: Snapshot, rules: list[str], severity: str | None, selection: Selection, page, size, facets=None
) -> Page:
    with _findings_of(con, snap):
        sql, params = _findings_query(rules, severity, selection)
        return paged(con, sql, params, (*PUBLISHED_FIELDS, "agent", "timestamp"), page, size, facets)


def findings_rows(con, snap: Snapshot, rules: list[str], severity: str | None, selection: Selection) -> list[dict]:
    """Every finding `findings_page` pages through (a download of `/audit`), in its order."""
    with _findings_of(con, snap):
        sql, params = _findings_query(rules, severity, selection)
        return list(stream(con.execute(f"SELECT {', '.join(PUBLISHED_FIELDS)} FROM ({sql})", params)))


def _findings_query(rules: list[str], severity: str | None, selection: Selection) -> tuple[str, list]:
    where, params = selection.where("f.", scope="copy")
    if rules:
        where += f" AND f.rule IN ({', '.join('?' for _ in rules)})"
        params += list(rules)
    if severity:
        where += " AND f.severity = ?"
        params.append(severity)
    order = "f.severity <> 'error', f.source_path, f.locator, f.rule, f.result_key, f.part_index, f.detail"
    return f"SELECT * FROM serve_findings f WHERE {where} ORDER BY {order}", params


CONFLICT_FIELDS = ("task_id", "message_id", "part_index", "detail", "source_path", "locator", "result_key")


def conflicts_page(con, snap: Snapshot, column: str, page: int, size: int) -> Page:
    """The audit's `conflicting-claims` findings on results citing `column`: where claims about it disagree."""
    with _findings_of(con, snap):
        return paged(con, *_conflicts_query(column), CONFLICT_FIELDS, page, size)


def conflict_rows(con, snap: Snapshot, column: str) -> list[dict]:
    """Every finding `conflicts_page` pages through (a download of a column's conflicts), in its order."""
    with _findings_of(con, snap):
        return list(stream(con.execute(*_conflicts_query(column))))


def _conflicts_query(column: str) -> tuple[str, list]:
    sql = f"""SELECT {", ".join(f"f.{name}" for name in CONFLICT_FIELDS)}
              FROM serve_findings f
              WHERE f.rule = 'conflicting-claims'
                AND f.result_key IN (SELECT result_key FROM citations WHERE source_column = ?)
              ORDER BY f.detail, f.source_path, f.locator"""
    return sql, [column]


@contextmanager
def _findings_of(con, snap: Snapshot):
    """The snapshot's findings as the view `serve_findings` of `con` while the block runs: those it holds, and the
    kept ones read where they are kept."""
    con.register("serve_findings_held", snap.findings)
    held = f"SELECT {_SHOWN} FROM serve_findings_held"
    kept = f"SELECT {_SHOWN} FROM ({snap.kept}) UNION ALL " if snap.kept else ""
    con.execute(f"CREATE OR REPLACE TEMP VIEW serve_findings AS {kept}{held}")
    try:
        yield
    finally:
        con.execute("DROP VIEW IF EXISTS serve_findings")
        con.unregister("serve_findings_held")


def findings_per_day(con, snap: Snapshot, agent: str | None = None) -> list[dict]:
    """Findings per day (of their copy's time) and rule."""
    with _findings_of(con, snap):
        where, params = ("agent = ?", [agent]) if agent else ("TRUE", [])
        sql = f"""SELECT CAST(timestamp AS DATE) AS day, rule, count(*) AS findings FROM serve_findings
                  WHERE timestamp IS NOT NULL AND {where} GROUP BY ALL ORDER BY day, rule"""
        return list(stream(con.execute(sql, params)))


# Verdicts: the latest of each citation of a result, with its citation's fields.

VERDICT_FIELDS = tuple(
    name
    for name in CitationVerdict.__dataclass_fields__
    if name not in ("fingerprint", "stale", "stale_because", "previous", "previous_at", "previous_stale", "kept")
)

_VERDICTS = """
SELECT v.result_key, u.result_kind, u.task_id, u.message_id, v.citation_hash, u.study, u.period, u.weight,
       u.source_table, u.source_column, u.source_function, v.verdict, v.reason,
       CAST(v.differences AS VARCHAR) AS differences, v.claims, v.rows_used, v.comparison, v.coverage, v.verified_at
FROM latest_verdicts v
JOIN (SELECT u.result_key, u.citation_hash, any_value(u.result_kind) AS result_kind, any_value(u.task_id) AS task_id,
             any_value(u.message_id) AS message_id, any_value(u.study) AS study, any_value(u.period) AS period,
             any_value(u.weight) AS weight, any_value(u.source_table) AS source_table,
             any_value(u.source_column) AS source_column, any_value(u.source_function) AS source_function
      FROM ({uses}) u
      GROUP BY u.result_key, u.citation_hash) u
  ON u.result_key = v.result_key AND u.citation_hash = v.citation_hash
WHERE {verdict}
ORDER BY v.verified_at DESC, v.result_key, v.citation_hash"""


def verdicts_page(con, selection: Selection, verdict: str | None, page: int, size: int) -> Page:
    found = paged(con, *_verdicts_query(selection, verdict), VERDICT_FIELDS, page, size)
    for row in found.rows:
        row["differences"] = orjson.loads(row["differences"]) if row["differences"] else []
    return found


def verdict_rows(con, selection: Selection, verdict: str | None) -> list[dict]:
    """Every verdict `verdicts_page` pages through (a download of `/verify`), in its order."""
    rows = list(stream(con.execute(*_verdicts_query(selection, verdict))))
    for row in rows:
        row["differences"] = orjson.loads(row["differences"]) if row["differences"] else []
    return rows


def _verdicts_query(selection: Selection, verdict: str | None) -> tuple[str, list]:
    where, params = selection.where("u.")
    judged = "(u.result_key, u.citation_hash) IN (SELECT result_key, citation_hash FROM verdicts)"
    sql = _VERDICTS.format(
        uses=views.citation_uses(f"{judged} AND {where}"), verdict="v.verdict = ?" if verdict else "TRUE"
    )
    return sql, params + ([verdict] if verdict else [])


def verdicts_per_day(con, agent: str | None) -> list[dict]:
    """Latest verdicts per day they were made and verdict, of one agent's results (or all)."""
    where = "TRUE"
    params: list = []
    if agent:
        where = f"result_key IN (SELECT result_key FROM ({views.copies()}) WHERE agent = ?)"
        params = [agent]
    sql = f"""SELECT CAST(verified_at AS DATE) AS day, verdict, count(*) AS verdicts FROM latest_verdicts
              WHERE {where} GROUP BY ALL ORDER BY day, verdict"""
    return list(stream(con.execute(sql, params)))


# A study, period, column, table or agent: the claims resting on it, by period.

SUBJECTS = {"study": "study", "period": "period", "column": "column", "table": "table", "agent": "agent"}


def by_period(con, selection: Selection) -> list[dict]:
    """Per period of the selection's citations: how many citations, the numbers stated by the claims resting on
    them (`claim_values`: claims counted once, as `archiver query claims` lists them) and the bases (n). No value
    is pooled: what was claimed is summed up per quantity (`cited_values`). Read from the cited cells kept with
    the claim index (`store.cells`)."""
    where, params = selection.where()
    sql = f"""
        SELECT period, count(DISTINCT citation_hash) AS citations, CAST(sum(valued) AS BIGINT) AS claim_values,
               min(base_n) AS base_min, max(base_n) AS base_max
        FROM {cells.source(con)} WHERE {where}
        GROUP BY period ORDER BY period NULLS LAST LIMIT 200"""
    return list(stream(con.execute(sql, params)))


def small_bases(con, selection: Selection, page: int = 1, size: int = PAGE_SIZE) -> Page:
    """The selection's citations whose base n is below `SMALL_BASE`, smallest first: counted and paged from one
    reading of them (a few of a subject's citations; each reading counts what rests on them over its copies, 2 s
    for a study at 100M claims)."""
    return page_of(SMALL_FIELDS, small_base_rows(con, selection), page, size)


def page_of(fields: tuple[str, ...], rows: list[dict], page: int, size: int) -> Page:
    """Page `page` of a list read whole (its `fields` of each row)."""
    page, size = page_bounds(page, size)
    start = (page - 1) * size
    return Page(fields, [{f: row.get(f) for f in fields} for row in rows[start : start + size]], len(rows), page, size)


def small_base_rows(con, selection: Selection) -> list[dict]:
    """Every citation `small_bases` pages through (a download of a subject's small bases), in its order."""
    return list(stream(con.execute(*_small_query(selection))))


SMALL_FIELDS = lineage.citations(Selection()).fields


def _small_query(selection: Selection) -> tuple[str, list]:
    """A citation's base is one for all its Parts (its hash is of its content): narrowed to the small ones before
    the claims, results, tasks and agents resting on each are counted."""
    query = lineage.citations(selection, condition=f"u.base_n < {SMALL_BASE}")
    return f"SELECT * FROM ({query.sql}) ORDER BY base_n, study, period, citation_hash", query.params


CHART_CELLS = 5_000
"""Cited cells (a period's column, function and pointer) a subject's charts read at most, in order."""


def cited_values(con, selection: Selection) -> tuple[list[dict], bool]:
    """What the claims resting on the selection's citations state, per period and quantity (study, table, column,
    function, cell: the core's name of the cell a claim fills, "18-34: share", else its pointer; unit; and whether
    the citation is valid and typed: `quantities.Quantity`): the least, mean and greatest value and the same of
    the citations' bases (each as often as it bases a value); `CHART_CELLS` at most, and whether there are more.
    Claims counted once, as `by_period` counts them, from the cited cells kept with the claim index (a mean, not
    a median: a median needs every value)."""
    where, params = selection.where()
    sql = f"""
        SELECT period, any_value(fielded) AS fielded, study, source_table, source_column, source_function, cell,
               unit, valid, inferred, min(low) AS low, sum(value_sum) / sum(valued) AS mean, max(high) AS high,
               min(base_n) AS base_low,
               sum(base_n * valued) / sum(valued) FILTER (WHERE base_n IS NOT NULL) AS base_mean,
               max(base_n) AS base_high
        FROM {cells.source(con)} WHERE {where} AND valued > 0
        GROUP BY period, study, source_table, source_column, source_function, cell, unit, valid, inferred
        ORDER BY period, source_column, study, source_table, source_function, cell, unit NULLS FIRST, valid, inferred
        LIMIT {CHART_CELLS + 1}"""
    rows = list(stream(con.execute(sql, params)))
    return rows[:CHART_CELLS], len(rows) > CHART_CELLS
