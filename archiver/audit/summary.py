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

# One row per result in scope: whether it is quantitative, cited, validly cited.
RESULT_STATUS = """
CREATE OR REPLACE TEMP TABLE audit_result_status AS
WITH quantitative AS (
    SELECT DISTINCT result_key FROM claims WHERE copy_id IN (SELECT copy_id FROM audit_copies)
),
cited AS (
    SELECT result_key, bool_and(valid AND NOT inferred) AS valid
    FROM citations WHERE copy_id IN (SELECT copy_id FROM audit_copies) GROUP BY result_key
)
SELECT s.result_key, q.result_key IS NOT NULL AS quantitative, c.result_key IS NOT NULL AS cited,
       q.result_key IS NOT NULL AND coalesce(c.valid, false) AS validly_cited
FROM (SELECT DISTINCT r.result_key FROM results r WHERE r.copy_id IN (SELECT copy_id FROM audit_copies)) s
LEFT JOIN quantitative q ON q.result_key = s.result_key
LEFT JOIN cited c ON c.result_key = s.result_key
"""

TOTALS = """
SELECT (SELECT count(*) FROM audit_result_status) AS results,
       (SELECT count(*) FROM audit_copies) AS copies,
       (SELECT count(*) FILTER (WHERE quantitative) FROM audit_result_status) AS quantitative_results,
       (SELECT count(*) FILTER (WHERE cited) FROM audit_result_status) AS cited_results,
       (SELECT count(*) FILTER (WHERE validly_cited) FROM audit_result_status) AS validly_cited_results,
       (SELECT count(*) FROM (
           SELECT DISTINCT cl.result_key, p.content_hash, cl.pointer
           FROM claims cl JOIN parts p ON p.part_id = cl.part_id
           WHERE cl.copy_id IN (SELECT copy_id FROM audit_copies))) AS claims
"""

PER_AGENT = """
SELECT a.agent,
       count(*) AS results,
       count(*) FILTER (WHERE s.quantitative) AS quantitative_results,
       count(*) FILTER (WHERE s.validly_cited) AS validly_cited_results
FROM (SELECT DISTINCT r.result_key, a.agent
      FROM results r JOIN result_agents a ON a.copy_id = r.copy_id
      WHERE r.copy_id IN (SELECT copy_id FROM audit_copies)) a
JOIN audit_result_status s ON s.result_key = a.result_key
GROUP BY a.agent
ORDER BY a.agent NULLS LAST
"""

PER_STUDY = """
SELECT x.study,
       count(*) AS quantitative_results,
       count(*) FILTER (WHERE s.validly_cited) AS validly_cited_results
FROM audit_result_status s
LEFT JOIN (SELECT DISTINCT result_key, study FROM citations
           WHERE copy_id IN (SELECT copy_id FROM audit_copies)) x ON x.result_key = s.result_key
WHERE s.quantitative
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
    con.execute(RESULT_STATUS)
    totals = _rows(con, TOTALS)[0]
    totals["validly_cited_share"] = share(totals["validly_cited_results"], totals["quantitative_results"])
    for name, sql in (("per_agent", PER_AGENT), ("per_study", PER_STUDY)):
        groups = _rows(con, sql)
        for group in groups:
            group["validly_cited_share"] = share(group["validly_cited_results"], group["quantitative_results"])
        totals[name] = groups
    con.execute("DROP TABLE audit_result_status")
    return totals
