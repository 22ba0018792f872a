"""Run the audit: materialize the scope, one query per rule into one findings table, then the summary."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..defaults import MIN_BASE
from ..query.selection import Selection
from ..store.connection import bounded_memory
from .report import FINDING_FIELDS, AuditReport, Finding, fails
from .rules import Rule
from .scope import materialize
from .summary import counts as summary_counts
from .summary import prepare as prepare_summary
from .wording import define as define_wording

if TYPE_CHECKING:
    import duckdb

DEFAULT_MIN_BASE = MIN_BASE
AUDIT_MEMORY_MB = 512
"""DuckDB's buffer pool while an audit runs and is read (it spills beyond, to a folder of the process): on an
archive of 10M claims `audit --format json` peaked at 2.0 GB unbounded, at 808 MB under this bound."""
_TEMPORARY = (
    "audit_findings",
    "audit_cited_parts",
    "audit_result_status",
    "audit_file_agents",
    "audit_copies",
    "audit_cards",
    "audit_records",
)

# One rule's findings in the columns of a `Finding`, typed alike whatever the rule leaves NULL.
_FINDINGS_OF = """
SELECT '{id}' AS rule, coalesce(CAST(f.severity AS VARCHAR), '{severity}') AS severity,
       CAST(f.result_key AS VARCHAR) AS result_key,
       CAST(f.task_id AS VARCHAR) AS task_id, CAST(f.message_id AS VARCHAR) AS message_id,
       CAST(f.context_id AS VARCHAR) AS context_id, CAST(f.artifact_id AS VARCHAR) AS artifact_id,
       CAST(f.part_index AS INTEGER) AS part_index, CAST(f.source_path AS VARCHAR) AS source_path,
       CAST(f.locator AS VARCHAR) AS locator, CAST(f.detail AS VARCHAR) AS detail, CAST(f.line AS BIGINT) AS line,
       CAST({reference} AS VARCHAR) AS reference
FROM ({sql}) f"""

_NO_FINDINGS = """
SELECT NULL AS severity, NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id,
       NULL AS artifact_id, NULL AS part_index, NULL AS source_path, NULL AS locator, NULL AS detail, NULL AS line,
       NULL AS reference
WHERE FALSE"""

# The order findings are reported in: errors before warnings, then by file and place in it, then rule,
# result and Part.
ORDER = """severity <> 'error', source_path, coalesce(line, 0), coalesce(locator, ''), rule, coalesce(result_key, ''),
           coalesce(artifact_id, ''), coalesce(part_index, -1), detail"""


class Audit:
    """An audit's findings, held in the temporary table `audit_findings` of its connection, and its summary."""

    def __init__(self, con: duckdb.DuckDBPyConnection, rules: list[Rule], counts: dict):
        self.con, self.rules, self.summary = con, rules, counts

    def fails(self, fail_on: str = "error") -> bool:
        return fails(self.summary["findings_by_severity"], fail_on)

    def report(self) -> AuditReport:
        return AuditReport(self.findings(), self.summary, self.rules)

    def findings(self) -> list[Finding]:
        rows = self.con.execute(f"SELECT {', '.join(FINDING_FIELDS)} FROM audit_findings ORDER BY {ORDER}").fetchall()
        return [Finding(*row) for row in rows]


@contextmanager
def audited(
    con: duckdb.DuckDBPyConnection,
    rules: list[Rule],
    selection: Selection | None = None,
    min_base: float = DEFAULT_MIN_BASE,
) -> Iterator[Audit]:
    """The audit, its findings in a temporary table on `con` for as long as the block runs."""
    selection = selection or Selection()
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar would write to stderr mid-report
    define_wording(con)
    materialize(con, selection)
    try:
        with bounded_memory(con, AUDIT_MEMORY_MB * 2**20):
            prepare_summary(con)
            _find(con, rules, {"min_base": min_base})
            counts = summary_counts(con)
            by_rule = dict.fromkeys((rule.id for rule in rules), 0)
            by_severity = {"error": 0, "warning": 0}
            for rule, severity, n in con.execute(
                "SELECT rule, severity, count(*) FROM audit_findings GROUP BY ALL"
            ).fetchall():
                by_rule[rule] += n
                by_severity[severity] += n
            counts["findings"] = by_rule
            counts["findings_by_severity"] = by_severity
            counts["min_base"] = min_base
            counts["filters"] = selection.as_dict()
            yield Audit(con, rules, counts)
    finally:
        for table in _TEMPORARY:
            con.execute(f"DROP TABLE IF EXISTS {table}")


def run_audit(
    con: duckdb.DuckDBPyConnection,
    rules: list[Rule],
    selection: Selection | None = None,
    min_base: float = DEFAULT_MIN_BASE,
) -> AuditReport:
    with audited(con, rules, selection, min_base) as audit:
        return audit.report()


def _find(con: duckdb.DuckDBPyConnection, rules: list[Rule], params: dict) -> None:
    for prepare in dict.fromkeys(rule.prepare for rule in rules if rule.prepare):
        _execute(con, prepare, params)
    queries = [
        _FINDINGS_OF.format(
            id=rule.id, severity=rule.severity, sql=rule.sql, reference="f.reference" if rule.references else "NULL"
        )
        for rule in rules
    ]
    _execute(
        con,
        "CREATE OR REPLACE TEMP TABLE audit_findings AS "
        + (" UNION ALL ".join(queries) or _FINDINGS_OF.format(id="", severity="", sql=_NO_FINDINGS, reference="NULL")),
        params,
    )


def _execute(con: duckdb.DuckDBPyConnection, sql: str, params: dict) -> None:
    con.execute(sql, {name: value for name, value in params.items() if re.search(rf"\${name}\b", sql)})
