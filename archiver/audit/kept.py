"""The audit kept by the writes that change it (issue 40), as the claim index is (`store.kept`): each result's
status (`audit_status_kept`) and findings (`audit_findings_kept`), so that an unfiltered audit, its summary and
serve's pages read them rather than run the rules over every copy (at 10M claims: 7.7 s each time).

Their definition is the audit's own: the rules and status query (`rules`, `summary`) restricted to the results
a refresh makes (`derive.of_results`), each judged from its own copies, which is what the unfiltered audit
reports of them. A write that touches a result marks it pending here too (`store.kept.touch`); `refresh` makes
the pending results' rows again, a batch a transaction, and an audit derives the rows of a result still pending
(`read`), so its answer never depends on whether a refresh ran.

`conflicting-claims` judges a result by the claims of every result of its quantity (one valid citation's study,
period, base, weight and source), so it is kept a quantity at a time: each result's quantity is kept
(`audit_quantities_kept`); a refresh marks a changed result's quantities, before and after, pending
(`audit_quantities_pending`), then makes the findings of every result of each pending quantity again, the rule
narrowed to those results. While anything is pending, an audit derives `conflicting-claims` over the whole archive.

What is not kept is derived as before: agent cards and records (`card-mode-undeclared`, `unreadable-record`,
`unrecognised-record`: few rows), verify's verdicts (`rerun-*`), `small-base` at another minimum base than the
default, and every filtered audit (a scope judges copies, not results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..defaults import MIN_BASE
from ..query.selection import Selection
from ..store import audit_sums
from ..store import kept as store_kept
from ..store.connection import drop_temporary, temporary_view
from ..store.tables import (
    AUDIT_FINDINGS,
    AUDIT_PENDING,
    AUDIT_QUANTITIES,
    AUDIT_QUANTITIES_PENDING,
    AUDIT_STATUS,
    AUDIT_SUMS,
)
from ..store.views import PLACES, placed
from .derive import CONFLICTS, MADE, find, of_results
from .derive import TEMPORARY as DERIVED_TEMPORARY
from .report import FINDING_FIELDS
from .rules import RULES, Rule, conflicts_among, result_quantities
from .scope import materialize
from .summary import SUMMED, prepare_agents
from .wording import define as define_wording

if TYPE_CHECKING:
    import duckdb

KEPT_RULES = (
    "uncited-result",
    "invalid-citation",
    "citation-type-lost",
    "dropped-part",
    "undecoded-part",
    "small-base",
    "conflicting-claims",
)
"""The rules kept: all but `conflicting-claims` judge a result from its own copies (and its file's agent cards
and records, which touch it), `small-base` at the default minimum base; `conflicting-claims` a quantity at a
time."""

_PER_RESULT = [rule for rule in RULES if rule.id in KEPT_RULES and rule is not CONFLICTS]
_FIELDS = ", ".join(FINDING_FIELDS)
_PLACED = ", ".join((*FINDING_FIELDS, *PLACES))
STATUS_FIELDS = (
    "result_key", "copies_all", "finished", "cited_any", "quantitative", "cited", "validly_cited", "copies", "stored",
    "claims", "agent", "one_agent", "study", "one_study", "agents", "studies",
)  # fmt: skip
"""A result's status as `audit_status_kept` keeps it and `summary.RESULT_STATUS` defines it."""
_PENDING = "result_key IN (SELECT result_key FROM audit_pending_now)"
_CONFLICTS_MADE = "audit_conflicts_made"
TEMPORARY = ("audit_pending_now", "audit_pending_status", MADE, "audit_derived", _CONFLICTS_MADE)
"""The temporary tables `read` leaves on its connection, beside the audit's own."""


REFRESH_RESULTS = 200_000
"""Results whose kept audit rows one refresh transaction makes: each batch scans the stored copies' tables once
(narrowed to its results), so at 10M claims 400,000 results took 20.1 s in batches of 50,000 and 10.6 s in
batches of 200,000, at the same peak (530-560 MB); a batch short of memory is halved (`store.kept`)."""


CONFLICT_RESULTS = 25_000
"""Results whose `conflicting-claims` findings one refresh transaction makes, about (whole quantities: at least one):
the rule holds every claim of a batch's quantities and their findings. At 10M claims (quantities of 620 results, 6
findings a result) 48 quantities fitted DuckDB's 384 MB and 96 did not; a batch of 50,000 quantities was halved
ten times, each try failing after 2-4 s, before one fitted (a quantity holds many results: at 100M claims a batch
of 781 quantities ran out of 256 MB)."""


def refresh(con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Make the kept audit rows of every pending result again, a batch of results a transaction
    (`store.kept.refreshing`). Returns how many results."""
    define_wording(con)
    try:
        done = store_kept.refreshing(
            con, AUDIT_PENDING, _make, "the audit's pending results stay so", on_batch, REFRESH_RESULTS
        )
        if con.execute(f"SELECT EXISTS (SELECT 1 FROM {AUDIT_QUANTITIES_PENDING})").fetchone()[0]:
            store_kept.refreshing(con, AUDIT_QUANTITIES_PENDING, _make_conflicts,
                                  "the audit's pending quantities stay so", batch=_quantities_a_batch(con),
                                  key="quantity", smallest=1)  # fmt: skip
        return done
    finally:
        _drop(con, _CONFLICTS_MADE)


def _quantities_a_batch(con: duckdb.DuckDBPyConnection) -> int:
    """How many quantities a batch of `conflicting-claims` makes: about `CONFLICT_RESULTS` results, over the
    pending quantities' mean results (grouped, so that it spills: quantities may be many)."""
    (mean,) = con.execute(
        f"""SELECT avg(n) FROM (SELECT quantity, count(*) AS n FROM {AUDIT_QUANTITIES}
            WHERE quantity IN (SELECT quantity FROM {AUDIT_QUANTITIES_PENDING}) GROUP BY quantity)"""
    ).fetchone()
    return max(1, int(CONFLICT_RESULTS // max(mean or 1.0, 1.0)))


def _make(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    """The rows of the results `chosen` chooses, in the caller's transaction: their status, quantity and findings
    but `conflicting-claims`, whose quantities (those the results had, and have) are left pending."""
    quantities = f"SELECT DISTINCT quantity FROM {AUDIT_QUANTITIES} WHERE {chosen}"
    con.execute(f"INSERT INTO {AUDIT_QUANTITIES_PENDING} {quantities}")
    con.execute(f"DELETE FROM {AUDIT_QUANTITIES} WHERE {chosen}")
    con.execute(f"INSERT INTO {AUDIT_QUANTITIES} SELECT result_key, quantity FROM ({result_quantities(chosen)})")
    con.execute(f"INSERT INTO {AUDIT_QUANTITIES_PENDING} {quantities}")
    of_results(con, chosen, _PER_RESULT, MIN_BASE)
    audit_sums.change(con, f"(SELECT * FROM {AUDIT_STATUS} WHERE {chosen})", "audit_result_status")
    con.execute(f"DELETE FROM {AUDIT_STATUS} WHERE {chosen}")
    con.execute(f"INSERT INTO {AUDIT_STATUS} BY NAME SELECT * FROM audit_result_status")
    con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE {chosen}")  # conflicting-claims too: made by quantity
    con.execute(f"INSERT INTO {AUDIT_FINDINGS} BY NAME {placed(f'SELECT {_FIELDS} FROM {MADE}', f'r.{chosen}')}")


def _of_quantities(chosen: str) -> str:
    """The results whose quantity `chosen` chooses (a condition on `quantity`)."""
    return f"result_key IN (SELECT result_key FROM {AUDIT_QUANTITIES} WHERE {chosen})"


def _conflicts(con: duckdb.DuckDBPyConnection, results: str) -> None:
    """`conflicting-claims` over the results `results` chooses (whole quantities), every copy in scope, into
    `_CONFLICTS_MADE`."""
    materialize(con, Selection())
    find(con, [conflicts_among(results)], {}, into=_CONFLICTS_MADE)


def _make_conflicts(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    """The `conflicting-claims` findings of every result of the quantities `chosen` chooses, in the caller's
    transaction."""
    results = _of_quantities(chosen)
    _conflicts(con, results)
    con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE rule = '{CONFLICTS.id}' AND {results}")
    made = placed(f"SELECT {_FIELDS} FROM {_CONFLICTS_MADE}", f"r.{results}")
    con.execute(f"INSERT INTO {AUDIT_FINDINGS} BY NAME {made}")


def differing(con: duckdb.DuckDBPyConnection, chosen: str = "SELECT DISTINCT result_key FROM results") -> list[str]:
    """The keys of the results (of those `chosen` selects, not pending) whose kept audit rows (status, quantity,
    findings; `conflicting-claims` of every result of their quantities not pending) are not the rows their
    definition gives: none, in an archive whose audit is kept as it should be."""
    define_wording(con)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE audit_checked AS SELECT DISTINCT result_key FROM ({chosen})
                    WHERE result_key NOT IN (SELECT result_key FROM {AUDIT_PENDING})""")
    among = "result_key IN (SELECT result_key FROM audit_checked)"
    settled = f"""quantity IN (SELECT quantity FROM {AUDIT_QUANTITIES} WHERE {among})
                  AND quantity NOT IN (SELECT quantity FROM {AUDIT_QUANTITIES_PENDING})"""
    conflicts = _of_quantities(settled)
    status = ", ".join(STATUS_FIELDS)
    try:
        of_results(con, among, _PER_RESULT, MIN_BASE)
        con.execute(f"CREATE OR REPLACE TEMP TABLE audit_checked_quantities AS {result_quantities(among)}")
        _conflicts(con, conflicts)
        pairs = [
            (f"SELECT {status} FROM {AUDIT_STATUS} WHERE {among}", f"SELECT {status} FROM audit_result_status"),
            (f"SELECT result_key, quantity FROM {AUDIT_QUANTITIES} WHERE {among}",
             "SELECT result_key, quantity FROM audit_checked_quantities"),
            (f"SELECT {_PLACED} FROM {AUDIT_FINDINGS} WHERE {among} AND rule <> '{CONFLICTS.id}'",
             placed(f"SELECT {_FIELDS} FROM {MADE}", f"r.{among}")),
            (f"SELECT {_PLACED} FROM {AUDIT_FINDINGS} WHERE {conflicts} AND rule = '{CONFLICTS.id}'",
             placed(f"SELECT {_FIELDS} FROM {_CONFLICTS_MADE}", f"r.{conflicts}")),
        ]  # fmt: skip
        unequal = " UNION ALL ".join(
            f"SELECT result_key FROM (({kept} EXCEPT ALL {made}) UNION ALL ({made} EXCEPT ALL {kept}))"
            for kept, made in pairs
        )
        return [key for (key,) in con.execute(f"SELECT DISTINCT result_key FROM ({unequal}) ORDER BY 1").fetchall()]
    finally:
        _drop(con, "audit_checked", "audit_checked_quantities", _CONFLICTS_MADE)


def _drop(con: duckdb.DuckDBPyConnection, *also: str) -> None:
    drop_temporary(con, *DERIVED_TEMPORARY, MADE, *also)


def kept_rules(rules: list[Rule], min_base: float, settled: bool = True) -> list[Rule]:
    """Of `rules`, those an unfiltered audit at `min_base` reads from the kept rows; `conflicting-claims` only
    when nothing is pending (`settled`)."""
    return [
        rule
        for rule in rules
        if rule.id in KEPT_RULES
        and (rule.id != "small-base" or min_base == MIN_BASE)
        and (rule is not CONFLICTS or settled)
    ]


def read(con: duckdb.DuckDBPyConnection, rules: list[Rule], min_base: float) -> str | None:
    """An unfiltered audit's `audit_findings`, `audit_result_status` and the summary's `SUMMED`, temporary views (and
    the scope and `audit_file_agents` the summary reads), on `con`: the kept rows and sums, a pending result's derived
    from its copies,
    and the rules that are not kept run over the whole archive (into `audit_derived`). When nothing is pending,
    the SQL of the kept findings the audit holds, each with its place (`views.PLACES`), over the archive's tables
    alone (so it can be read after the audit's temporary tables are gone); else None."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE audit_pending_now AS SELECT DISTINCT result_key FROM {AUDIT_PENDING}")
    waiting = con.execute("SELECT count(*) FROM audit_pending_now").fetchone()[0]
    settled = not waiting and not store_kept.pending(con, AUDIT_QUANTITIES_PENDING, "quantity")
    kept = kept_rules(rules, min_base, settled)
    settled = f"WHERE NOT {_PENDING}" if waiting else ""
    status = f"SELECT * FROM {AUDIT_STATUS} {settled}"
    findings = [
        f"SELECT {_FIELDS} FROM {AUDIT_FINDINGS} WHERE rule IN ({_ids(kept)}) {settled.replace('WHERE', 'AND')}"
    ]
    if waiting:
        of_results(con, _PENDING, [rule for rule in kept if rule is not CONFLICTS], min_base)
        con.execute("CREATE OR REPLACE TEMP TABLE audit_pending_status AS SELECT * FROM audit_result_status")
        status += " UNION ALL BY NAME SELECT * FROM audit_pending_status"
        findings.append(f"SELECT {_FIELDS} FROM {MADE}")
    materialize(con, Selection())
    prepare_agents(con)
    temporary_view(con, "audit_result_status", status)  # read in place: a copy cost most of a summary's time
    sums = f"SELECT {', '.join((*audit_sums.KEYS, *audit_sums.SUMS))} FROM {AUDIT_SUMS}"
    if waiting:  # a pending result's kept status taken out of the sums, its status derived put in
        kept_pending = f"(SELECT * FROM {AUDIT_STATUS} WHERE {_PENDING})"
        sums += f" UNION ALL {audit_sums.rows(kept_pending, -1)} UNION ALL {audit_sums.rows('audit_pending_status')}"
    temporary_view(con, SUMMED, sums)
    find(con, [rule for rule in rules if rule not in kept], {"min_base": min_base}, into="audit_derived")
    findings.append(f"SELECT {_FIELDS} FROM audit_derived")
    temporary_view(con, "audit_findings", " UNION ALL ".join(findings))
    return None if waiting else f"SELECT {_PLACED} FROM {AUDIT_FINDINGS} WHERE rule IN ({_ids(kept)})"


def _ids(rules: list[Rule]) -> str:
    return ", ".join(f"'{rule.id}'" for rule in rules) or "NULL"
