"""The audit kept by the writes that change it (issue 40), as the claim index is (`store.kept`): each result's
status (`audit_status_kept`) and the findings of the rules that judge one result from its own copies
(`audit_findings_kept`), so that an unfiltered audit, its summary and serve's pages read them rather than run
the rules over every copy (at 10M claims: 4 s and 2 GB each time).

Their definition is the audit's own: the rules and status query (`rules`, `summary`) restricted to the results
a refresh makes (`derive.of_results`), each judged from its own copies, which is what the unfiltered audit
reports of them. A write that touches a result marks it pending here too (`store.kept.touch`); `refresh` makes
the pending results' rows again, a batch a transaction, and an audit derives the rows of a result still pending
(`read`), so its answer never depends on whether a refresh ran.

What is not kept is derived as before, over the whole archive: the rules that judge more than one result
(`conflicting-claims`, whose finding on one result depends on claims in others), agent cards and records
(`card-mode-undeclared`, `unreadable-record`, `unrecognised-record`), verify's verdicts (`rerun-*`), `small-base`
at another minimum base than the default, and every filtered audit (a scope judges copies, not results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..defaults import MIN_BASE
from ..query.selection import Selection
from ..store import kept as store_kept
from ..store.tables import AUDIT_FINDINGS, AUDIT_PENDING, AUDIT_STATUS
from .derive import MADE, find, of_results
from .report import FINDING_FIELDS
from .rules import RULES, Rule
from .scope import materialize
from .summary import prepare_agents
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
)
"""The rules whose findings on a result depend on that result's copies alone (and its file's agent cards and
records, which touch it): kept, `small-base` at the default minimum base."""

_KEPT = [rule for rule in RULES if rule.id in KEPT_RULES]
_FIELDS = ", ".join(FINDING_FIELDS)
STATUS_FIELDS = (
    "result_key", "copies_all", "finished", "cited_any", "quantitative", "cited", "validly_cited", "copies", "stored",
    "claims", "agent", "one_agent", "study", "one_study",
)  # fmt: skip
"""A result's status as `audit_status_kept` keeps it and `summary.RESULT_STATUS` defines it."""
_PENDING = "result_key IN (SELECT result_key FROM audit_pending_now)"
TEMPORARY = ("audit_pending_now", "audit_pending_status", MADE, "audit_derived")
"""The temporary tables `read` leaves on its connection, beside the audit's own."""


def refresh(con: duckdb.DuckDBPyConnection, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Make the kept audit rows of every pending result again, a batch of results a transaction
    (`store.kept.refreshing`). Returns how many results."""
    define_wording(con)
    try:
        return store_kept.refreshing(con, AUDIT_PENDING, _make, "the audit's pending results stay so", on_batch)
    finally:
        _drop(con)


def _make(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    of_results(con, chosen, _KEPT, MIN_BASE)
    con.execute(f"DELETE FROM {AUDIT_STATUS} WHERE {chosen}")
    con.execute(f"INSERT INTO {AUDIT_STATUS} BY NAME SELECT * FROM audit_result_status")
    con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE {chosen}")
    con.execute(f"INSERT INTO {AUDIT_FINDINGS} BY NAME SELECT {_FIELDS} FROM {MADE}")


def differing(con: duckdb.DuckDBPyConnection, chosen: str = "SELECT DISTINCT result_key FROM results") -> list[str]:
    """The keys of the results (of those `chosen` selects, not pending) whose kept audit rows (status, findings)
    are not the rows their definition gives: none, in an archive whose audit is kept as it should be."""
    define_wording(con)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE audit_checked AS SELECT DISTINCT result_key FROM ({chosen})
                    WHERE result_key NOT IN (SELECT result_key FROM {AUDIT_PENDING})""")
    among = "result_key IN (SELECT result_key FROM audit_checked)"
    status = ", ".join(STATUS_FIELDS)
    try:
        of_results(con, among, _KEPT, MIN_BASE)
        return [key for (key,) in con.execute(f"""
            SELECT DISTINCT result_key FROM (
                (SELECT {status} FROM {AUDIT_STATUS} WHERE {among} EXCEPT ALL SELECT {status} FROM audit_result_status)
                UNION ALL (SELECT {status} FROM audit_result_status
                           EXCEPT ALL SELECT {status} FROM {AUDIT_STATUS} WHERE {among})
                UNION ALL BY NAME (SELECT {_FIELDS} FROM {AUDIT_FINDINGS} WHERE {among}
                                   EXCEPT ALL SELECT {_FIELDS} FROM {MADE})
                UNION ALL BY NAME (SELECT {_FIELDS} FROM {MADE}
                                   EXCEPT ALL SELECT {_FIELDS} FROM {AUDIT_FINDINGS} WHERE {among}))
            ORDER BY 1""").fetchall()]  # fmt: skip
    finally:
        _drop(con, "audit_checked")


def _drop(con: duckdb.DuckDBPyConnection, *also: str) -> None:
    for table in ("audit_copies", "audit_cards", "audit_records", "audit_file_agents", "audit_result_status",
                  "audit_cited_parts", MADE, *also):  # fmt: skip
        con.execute(f"DROP TABLE IF EXISTS {table}")


def kept_rules(rules: list[Rule], min_base: float) -> list[Rule]:
    """Of `rules`, those an unfiltered audit at `min_base` reads from the kept rows."""
    return [rule for rule in rules if rule.id in KEPT_RULES and (rule.id != "small-base" or min_base == MIN_BASE)]


def read(con: duckdb.DuckDBPyConnection, rules: list[Rule], min_base: float) -> None:
    """An unfiltered audit's `audit_findings` and `audit_result_status` (and the scope and `audit_file_agents`
    the summary reads), on `con`: the kept rows, a pending result's derived from its copies, and the rules that
    are not kept run over the whole archive."""
    kept = kept_rules(rules, min_base)
    con.execute(f"CREATE OR REPLACE TEMP TABLE audit_pending_now AS SELECT DISTINCT result_key FROM {AUDIT_PENDING}")
    waiting = con.execute("SELECT count(*) FROM audit_pending_now").fetchone()[0]
    settled = f"WHERE NOT {_PENDING}" if waiting else ""
    status = f"SELECT * FROM {AUDIT_STATUS} {settled}"
    findings = [
        f"SELECT {_FIELDS} FROM {AUDIT_FINDINGS} WHERE rule IN ({_ids(kept)}) {settled.replace('WHERE', 'AND')}"
    ]
    if waiting:
        of_results(con, _PENDING, kept, min_base)
        con.execute("CREATE OR REPLACE TEMP TABLE audit_pending_status AS SELECT * FROM audit_result_status")
        status += " UNION ALL BY NAME SELECT * FROM audit_pending_status"
        findings.append(f"SELECT {_FIELDS} FROM {MADE}")
    materialize(con, Selection())
    prepare_agents(con)
    con.execute(f"CREATE OR REPLACE TEMP TABLE audit_result_status AS {status}")
    find(con, [rule for rule in rules if rule not in kept], {"min_base": min_base}, into="audit_derived")
    findings.append(f"SELECT {_FIELDS} FROM audit_derived")
    con.execute(f"CREATE OR REPLACE TEMP TABLE audit_findings AS {' UNION ALL '.join(findings)}")


def _ids(rules: list[Rule]) -> str:
    return ", ".join(f"'{rule.id}'" for rule in rules) or "NULL"
