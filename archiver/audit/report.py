"""What an audit found: findings, the summary of the archive audited, and the verdict for CI."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from .rules import ERROR, WARNING, Rule

SEVERITY_RANK = {ERROR: 2, WARNING: 1}
FAIL_ON = {"error": 2, "warning": 1, "never": None}


def fails(by_severity: dict[str, int], fail_on: str = "error") -> bool:
    """Whether a finding at or above `fail_on` (error, warning or never) exists, by the count per severity."""
    threshold = FAIL_ON[fail_on]
    return threshold is not None and any(
        n and SEVERITY_RANK[severity] >= threshold for severity, n in by_severity.items()
    )


@dataclass(frozen=True)
class Finding:
    """One problem in one stored copy (or agent card, or quarantined record)."""

    rule: str
    severity: str
    result_key: str | None
    task_id: str | None
    message_id: str | None
    context_id: str | None
    artifact_id: str | None
    part_index: int | None
    source_path: str
    locator: str | None
    detail: str
    line: int | None = field(default=None, compare=False)
    reference: str | None = field(default=None, compare=False)
    """The source path of the copy the finding compares this one with, where that is an origin copy
    (dropped-part): SARIF's related location; the sentence names it for every other format."""

    def as_dict(self) -> dict:
        """The finding as published (JSON, JSON Lines): `line` and `reference` stay internal, the locator
        and the sentence say them."""
        value = asdict(self)
        del value["line"], value["reference"]
        return value


INTERNAL_FIELDS = ("line", "reference")
FINDING_FIELDS = tuple(f.name for f in fields(Finding))
PUBLISHED_FIELDS = tuple(name for name in FINDING_FIELDS if name not in INTERNAL_FIELDS)
"""A finding's fields as JSON, JSON Lines and SARIF publish them."""


@dataclass
class AuditReport:
    findings: list[Finding]
    summary: dict
    rules: list[Rule]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def fails(self, fail_on: str = "error") -> bool:
        return fails(self.summary["findings_by_severity"], fail_on)

    def as_dict(self) -> dict:
        return {"findings": [f.as_dict() for f in self.findings], "summary": self.summary}
