"""Audit: the Citations v1 promises checked over the archive's index, one set-based query per rule."""

from .report import AuditReport, Finding
from .rules import RULES, RULES_BY_ID, Rule, select_rules
from .run import DEFAULT_MIN_BASE, run_audit

__all__ = [
    "DEFAULT_MIN_BASE",
    "RULES",
    "RULES_BY_ID",
    "AuditReport",
    "Finding",
    "Rule",
    "run_audit",
    "select_rules",
]
