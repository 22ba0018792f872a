"""Derive findings: one query per rule over the archive, into one temporary table of a `Finding`'s columns, for
the scope `audit.scope` made (every rule reads it); and the findings and status of chosen results, derived
from their own copies, as the kept audit holds them (`audit.kept`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..store.connection import drop_temporary
from ..store.tables import AUDIT_PENDING, AUDIT_QUANTITIES, AUDIT_QUANTITIES_PENDING
from .rules import RULES_BY_ID, Rule, conflicts_among, result_quantities
from .scope import restrict
from .summary import prepare as prepare_summary

if TYPE_CHECKING:
    import duckdb

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

MADE = "audit_made"
"""The temporary table `of_results` leaves the chosen results' findings in (their status: `audit_result_status`)."""

TEMPORARY = (
    "audit_copies", "audit_cards", "audit_records", "audit_file_agents", "audit_result_status", "audit_summary_rows",
    "audit_cited_parts",
)  # fmt: skip
"""The temporary tables a derivation leaves on its connection: the scope, the summary's and the rules' own."""


CONFLICTS = RULES_BY_ID["conflicting-claims"]

DERIVED_CONFLICT_RESULTS = 200_000
"""Results whose quantities' `conflicting-claims` findings one statement derives, about (whole quantities): the rule
holds a batch's claims and findings at once, and over a third of 100M claims in one statement it spilled 33 GB and
filled the disk; each batch reads every claim once (1 s at 10M claims)."""


def find(con: duckdb.DuckDBPyConnection, rules: list[Rule], params: dict, into: str = "audit_findings") -> None:
    """Run `rules` (their shared preparations first) into the temporary table `into`, over the scope made;
    `conflicting-claims` (the rule as `RULES` has it, over every result) a batch of quantities at a time
    (`_conflicts_by_quantity`)."""
    for prepare in dict.fromkeys(rule.prepare for rule in rules if rule.prepare):
        _execute(con, prepare, params)
    queries = [_findings_of(rule) for rule in rules if rule is not CONFLICTS]
    _execute(
        con,
        f"CREATE OR REPLACE TEMP TABLE {into} AS "
        + (" UNION ALL ".join(queries) or _FINDINGS_OF.format(id="", severity="", sql=_NO_FINDINGS, reference="NULL")),
        params,
    )
    if any(rule is CONFLICTS for rule in rules):
        _conflicts_by_quantity(con, into)


def _findings_of(rule: Rule) -> str:
    return _FINDINGS_OF.format(
        id=rule.id, severity=rule.severity, sql=rule.sql, reference="f.reference" if rule.references else "NULL"
    )


def _conflicts_by_quantity(con: duckdb.DuckDBPyConnection, into: str) -> None:
    """`conflicting-claims` of the quantities holding a copy in scope, appended to `into` a batch of about
    `DERIVED_CONFLICT_RESULTS` results' quantities at a time: a quantity's findings depend on its own results
    alone, so the batches' findings are the rule's over every result."""
    in_scope = "result_key IN (SELECT result_key FROM results WHERE audit_copy_in_scope(copy_id))"
    quantities = AUDIT_QUANTITIES  # each result's quantity as kept, when nothing waits to be kept
    pending = f"SELECT EXISTS (SELECT 1 FROM {AUDIT_PENDING}) OR EXISTS (SELECT 1 FROM {AUDIT_QUANTITIES_PENDING})"
    if con.execute(pending).fetchone()[0]:  # else worked out (at 100M claims, 9.6M results: past the audit's memory)
        quantities = "audit_result_quantities"
        con.execute(f"CREATE OR REPLACE TEMP TABLE {quantities} AS {result_quantities('TRUE')}")
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE audit_quantity_batches AS
            SELECT quantity, (sum(results) OVER (ORDER BY quantity) - results) // {DERIVED_CONFLICT_RESULTS} AS batch
            FROM (SELECT quantity, count(*) AS results FROM {quantities}
                  WHERE quantity IN (SELECT quantity FROM {quantities} WHERE {in_scope})
                  GROUP BY quantity)"""
    )
    try:
        batches = [
            batch for (batch,) in con.execute("SELECT DISTINCT batch FROM audit_quantity_batches ORDER BY 1").fetchall()
        ]
        for batch in batches:
            results = f"""result_key IN (SELECT result_key FROM {quantities} WHERE quantity IN
                          (SELECT quantity FROM audit_quantity_batches WHERE batch = {int(batch)}))"""
            con.execute(f"INSERT INTO {into} {_findings_of(conflicts_among(results))}")
    finally:
        drop_temporary(con, "audit_result_quantities", "audit_quantity_batches")


def of_results(con: duckdb.DuckDBPyConnection, chosen: str, rules: list[Rule], min_base: float) -> None:
    """The findings of `rules` and the status of the results `chosen` chooses (a condition on `result_key`),
    judged from their own copies, in `MADE` and `audit_result_status`: what an unfiltered audit reports of those
    results, for the rules that judge one result (`audit.kept.KEPT_RULES`)."""
    restrict(con, chosen)
    prepare_summary(con, chosen)
    find(con, rules, {"min_base": min_base}, into=MADE)


def _execute(con: duckdb.DuckDBPyConnection, sql: str, params: dict) -> None:
    con.execute(sql, {name: value for name, value in params.items() if re.search(rf"\${name}\b", sql)})
