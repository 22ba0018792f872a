"""Run the audit: materialize the scope, one query per rule, then the summary."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import summary
from .report import AuditReport, Finding
from .rules import Rule
from .scope import Scope

if TYPE_CHECKING:
    import duckdb

DEFAULT_MIN_BASE = 30
_SCOPE_TABLES = ("audit_copies", "audit_cards", "audit_records")


def run_audit(con: duckdb.DuckDBPyConnection, rules: list[Rule], scope: Scope | None = None,
              min_base: float = DEFAULT_MIN_BASE) -> AuditReport:
    scope = scope or Scope()
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar would write to stderr mid-report
    scope.materialize(con)
    try:
        findings = [finding for rule in rules for finding in _findings(con, rule, {"min_base": min_base})]
        counts = summary.counts(con)
    finally:
        for table in _SCOPE_TABLES:
            con.execute(f"DROP TABLE IF EXISTS {table}")
    findings.sort(key=Finding.sort_key)
    by_rule = {rule.id: 0 for rule in rules}
    for finding in findings:
        by_rule[finding.rule] += 1
    counts["findings"] = by_rule
    counts["findings_by_severity"] = {"error": sum(f.severity == "error" for f in findings),
                                      "warning": sum(f.severity == "warning" for f in findings)}
    counts["min_base"] = min_base
    counts["filters"] = scope.as_dict()
    return AuditReport(findings, counts, rules)


def _findings(con: duckdb.DuckDBPyConnection, rule: Rule, params: dict) -> list[Finding]:
    used = {name: value for name, value in params.items() if re.search(rf"\${name}\b", rule.sql)}
    cursor = con.execute(rule.sql, used)
    names = [d[0] for d in cursor.description]
    found = []
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        found.append(Finding(
            rule=rule.id, severity=row.get("severity") or rule.severity, result_key=row["result_key"],
            task_id=row["task_id"], message_id=row["message_id"], context_id=row["context_id"],
            artifact_id=row["artifact_id"], part_index=row["part_index"], source_path=row["source_path"],
            locator=row["locator"], detail=rule.detail(row), line=row["line"],
        ))
    return found
