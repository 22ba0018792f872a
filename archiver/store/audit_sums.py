"""The audit summary's counts, kept (issue 40): what `audit --summary`, the headline figure (`Archive.cited`) and
serve's overview count over every result (results, their copies, the quantitative, cited and validly cited ones and
their claims; overall, per agent and per study), read from a few rows instead of aggregated over every result's
kept status on every read (0.45 s at 100M claims).

What one result's status adds to them is `rows` (over any relation of statuses, as the audit makes them,
`audit.summary.RESULT_STATUS`: a filtered audit sums the same rows of its own scope). The sums of every kept status
(`audit_status_kept`) are kept in `audit_summary_kept`, a row per `kind` ('total', 'agent', 'study') and `name`: a
refresh of the kept audit (`audit.kept`) changes them by what it changed, in its transaction, its results' old
statuses taken out and their new ones put in (`change`). They equal their definition, every kept status's rows
summed (`DEFINITION`; `db check`'s `audit-sums`, `DIFFERING`); `rebuild` makes them so (an upgrade to schema 20, `db
repair`)."""

from __future__ import annotations

import duckdb

from .kept import add_to_sums
from .tables import AUDIT_STATUS, AUDIT_SUMS

KEYS = ("kind", "name")
SUMS = ("results", "copies", "quantitative_results", "cited_results", "validly_cited_results", "claims")
TOTAL, AGENT, STUDY = "total", "agent", "study"


def rows(status: str, sign: int = 1) -> str:
    """SQL of what each status of `status` (a relation with `audit_status_kept`'s columns) adds to the sums, times
    `sign`: `KEYS`, then `SUMS`. A result with a copy in scope counts in the total; once under each agent of its
    copies; once under each study its citations name when it is quantitative (an uncited one under study NULL)."""
    return f"""
    SELECT '{TOTAL}' AS kind, NULL::VARCHAR AS name, {sign} AS results, {sign} * copies AS copies,
           {sign} * quantitative::INTEGER AS quantitative_results, {sign} * cited::INTEGER AS cited_results,
           {sign} * validly_cited::INTEGER AS validly_cited_results, {sign} * coalesce(claims, 0) AS claims
    FROM {status} WHERE copies > 0
    UNION ALL
    SELECT '{AGENT}', unnest(CASE WHEN one_agent THEN [agent] ELSE agents END), {sign}, 0,
           {sign} * quantitative::INTEGER, 0, {sign} * validly_cited::INTEGER, 0
    FROM {status} WHERE copies > 0
    UNION ALL
    SELECT '{STUDY}', unnest(CASE WHEN one_study THEN [study] ELSE studies END), 0, 0, {sign}, 0,
           {sign} * validly_cited::INTEGER, 0
    FROM {status} WHERE copies > 0 AND quantitative"""


def summed(relation: str) -> str:
    """SQL of the rows of `relation` (`rows`, or sums of them) summed by `KEYS`, sums of nothing left out."""
    sums = ", ".join(f"CAST(sum({name}) AS BIGINT) AS {name}" for name in SUMS)
    return f"""SELECT kind, name, {sums} FROM ({relation}) GROUP BY kind, name
               HAVING {" OR ".join(f"sum({name}) <> 0" for name in SUMS)}"""


DEFINITION = summed(rows(AUDIT_STATUS))
"""The sums of every kept status: what `audit_summary_kept` keeps."""

_SHOWN = f"CAST(ROW({', '.join(SUMS)}) AS VARCHAR)"
DIFFERING = f"""
    WITH kept AS (SELECT {", ".join((*KEYS, *SUMS))} FROM {AUDIT_SUMS}), made AS ({DEFINITION})
    SELECT kind || coalesce(' ' || name, '') || ': ' || string_agg(side || ' ' || shown, ', ' ORDER BY side)
    FROM (SELECT *, 'kept' AS side, {_SHOWN} AS shown FROM (SELECT * FROM kept EXCEPT ALL SELECT * FROM made)
          UNION ALL
          SELECT *, 'summed', {_SHOWN} FROM (SELECT * FROM made EXCEPT ALL SELECT * FROM kept))
    GROUP BY kind, name ORDER BY 1"""
"""The kept sums that are not their definition's, a line each (what is kept, what the statuses sum to): none, when
kept as they should be."""


def change(con: duckdb.DuckDBPyConnection, before: str, after: str) -> None:
    """In the caller's transaction: the kept sums changed from what the statuses of `before` add to what those of
    `after` add (relations of statuses: a refresh's results as kept, and as made again)."""
    add_to_sums(con, AUDIT_SUMS, KEYS, SUMS, f"{rows(before, -1)} UNION ALL {rows(after)}")


def rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """In the caller's transaction: the kept sums made again from every kept status."""
    con.execute(f"DELETE FROM {AUDIT_SUMS}")
    con.execute(f"INSERT INTO {AUDIT_SUMS} BY NAME {DEFINITION}")
