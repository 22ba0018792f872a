"""The audit summary's counts, over the stored copies in scope.

A result is *quantitative* when a copy of it states a number (a claim). It is
*cited* when a copy holds a citation Part, typed or probable, and *validly
cited* when it holds at least one and every citation Part it holds is valid and
typed (a citation whose media type was lost is no valid citation: consumers
cannot recognise it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

_BASE = """
WITH scoped AS (
    SELECT r.copy_id, r.result_key, a.agent
    FROM results r JOIN audit_copies s ON s.copy_id = r.copy_id JOIN result_agents a ON a.copy_id = r.copy_id
),
quantitative AS (
    SELECT DISTINCT result_key FROM claims WHERE copy_id IN (SELECT copy_id FROM scoped)
),
cited AS (
    SELECT result_key, bool_and(valid AND NOT inferred) AS valid
    FROM citations WHERE copy_id IN (SELECT copy_id FROM scoped) GROUP BY result_key
)
"""

TOTALS = _BASE + """
SELECT (SELECT count(DISTINCT result_key) FROM scoped) AS results,
       (SELECT count(*) FROM scoped) AS copies,
       (SELECT count(*) FROM quantitative) AS quantitative_results,
       (SELECT count(*) FROM cited) AS cited_results,
       (SELECT count(*) FROM quantitative q JOIN cited c ON c.result_key = q.result_key WHERE c.valid)
           AS validly_cited_results,
       (SELECT count(DISTINCT (cl.result_key, p.content_hash, cl.pointer))
          FROM claims cl JOIN parts p ON p.part_id = cl.part_id
         WHERE cl.copy_id IN (SELECT copy_id FROM scoped)) AS claims
"""

PER_AGENT = _BASE + """
SELECT s.agent,
       count(DISTINCT s.result_key) AS results,
       count(DISTINCT q.result_key) AS quantitative_results,
       count(DISTINCT q.result_key) FILTER (WHERE c.valid) AS validly_cited_results
FROM scoped s
LEFT JOIN quantitative q ON q.result_key = s.result_key
LEFT JOIN cited c ON c.result_key = s.result_key
GROUP BY s.agent
ORDER BY s.agent NULLS LAST
"""

PER_STUDY = _BASE + """
SELECT x.study,
       count(DISTINCT q.result_key) AS quantitative_results,
       count(DISTINCT q.result_key) FILTER (WHERE c.valid) AS validly_cited_results
FROM quantitative q
LEFT JOIN (SELECT DISTINCT result_key, study FROM citations WHERE copy_id IN (SELECT copy_id FROM scoped)) x
       ON x.result_key = q.result_key
LEFT JOIN cited c ON c.result_key = q.result_key
GROUP BY x.study
ORDER BY x.study NULLS LAST
"""


def share(validly_cited: int, quantitative: int) -> float | None:
    return round(validly_cited / quantitative, 4) if quantitative else None


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def counts(con: duckdb.DuckDBPyConnection) -> dict:
    """Totals, and the validly cited share overall, per agent and per study (no study: uncited)."""
    totals = _rows(con, TOTALS)[0]
    totals["validly_cited_share"] = share(totals["validly_cited_results"], totals["quantitative_results"])
    for name, sql in (("per_agent", PER_AGENT), ("per_study", PER_STUDY)):
        groups = _rows(con, sql)
        for group in groups:
            group["validly_cited_share"] = share(group["validly_cited_results"], group["quantitative_results"])
        totals[name] = groups
    return totals
