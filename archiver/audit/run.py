"""Run the audit into one findings table, then the summary: an unfiltered audit reads what the writes keep
(`audit.kept`) and derives the rest; a filtered one materializes its scope and runs one query per rule."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..defaults import MIN_BASE
from ..query.selection import Selection
from ..store.backend import spill_folder
from ..store.connection import bounded_memory, drop_temporary, transaction
from .derive import TEMPORARY as DERIVED_TEMPORARY
from .derive import find
from .kept import TEMPORARY as KEPT_TEMPORARY
from .kept import read as read_kept
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
AUDIT_SPILL_MB = 16 * 1024
"""The most an audit spills to disk (beyond its memory), or half the free space of the folder it spills to if that is
less: a filtered audit of 100M claims, deriving conflicting-claims over a third of them, spilled 33 GB and filled
the disk after 211 s; held to this, it stops with one line instead, leaving the disk to the rest of the machine."""
_TEMPORARY = ("audit_findings", *DERIVED_TEMPORARY, *KEPT_TEMPORARY)


# The order findings are reported in: errors before warnings, then by file and place in it, then rule,
# result and Part.
ORDER = """severity <> 'error', source_path, coalesce(line, 0), coalesce(locator, ''), rule, coalesce(result_key, ''),
           coalesce(artifact_id, ''), coalesce(part_index, -1), detail"""


class Audit:
    """An audit's findings, held in the temporary table `audit_findings` of its connection, and its summary."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        rules: list[Rule],
        counts: dict,
        kept: str | None = None,
        by_file: list[tuple] = (),
    ):
        self.con, self.rules, self.summary = con, rules, counts
        self.kept = kept
        """The SQL of the findings read from the kept audit, with their places, over the archive's tables alone
        (`audit.kept.read`); the rest are in `audit_derived` while the block runs. None: `audit_findings` is all."""
        self.by_file = list(by_file)
        """How many findings of each rule and severity each file holds: (rule, severity, source_path, n), what the
        summary's counts by rule, severity and agent are sums of (one reading of the findings: 3 took 0.07 s at
        100M claims)."""

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
    derive: bool = False,
) -> Iterator[Audit]:
    """The audit, its findings in a temporary table or view on `con` for as long as the block runs, read in one
    transaction (one state of the archive, whatever another writer of a lake commits meanwhile). With `derive`,
    an unfiltered audit runs every rule over the whole archive instead of reading what is kept: the kept rows'
    definition (`audit.kept`)."""
    selection = selection or Selection()
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar would write to stderr mid-report
    define_wording(con)
    with bounded_memory(con, AUDIT_MEMORY_MB * 2**20, _spill_bound()), transaction(con, commit=False):
        kept = None
        if selection == Selection() and not derive:  # the kept rows, and what is not kept derived (`audit.kept`)
            kept = read_kept(con, rules, min_base)
        else:
            materialize(con, selection)
            prepare_summary(con)
            find(con, rules, {"min_base": min_base})
        counts = summary_counts(con)
        by_rule = dict.fromkeys((rule.id for rule in rules), 0)
        by_severity = {"error": 0, "warning": 0}
        found = con.execute("SELECT rule, severity, source_path, count(*) FROM audit_findings GROUP BY ALL").fetchall()
        for rule, severity, _, n in found:
            by_rule[rule] += n
            by_severity[severity] += n
        counts["findings"] = by_rule
        counts["findings_by_severity"] = by_severity
        counts["min_base"] = min_base
        counts["filters"] = selection.as_dict()
        yield Audit(con, rules, counts, kept, found)
        drop_temporary(con, *_TEMPORARY)  # what the block raised rolls them back with the rest


def _spill_bound() -> int:
    """`AUDIT_SPILL_MB`, or half the free space where DuckDB spills (`backend.spill_folder`'s folder) if less."""
    free = shutil.disk_usage(os.path.dirname(spill_folder())).free
    return min(AUDIT_SPILL_MB * 2**20, free // 2)


def run_audit(
    con: duckdb.DuckDBPyConnection,
    rules: list[Rule],
    selection: Selection | None = None,
    min_base: float = DEFAULT_MIN_BASE,
) -> AuditReport:
    with audited(con, rules, selection, min_base) as audit:
        return audit.report()
