"""An audit report as a table for people, JSON, JSON Lines, or SARIF 2.1.0 for code hosts."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from .report import AuditReport, Finding

FORMATS = ("table", "json", "jsonl", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://standards.upperhandai.com/ext/citations/v1"


def render(report: AuditReport, fmt: str) -> str:
    return {"table": table, "json": as_json, "jsonl": as_jsonl, "sarif": sarif}[fmt](report)


def _dumps(value, indent: bool = True) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0, default=str).decode()


def as_json(report: AuditReport) -> str:
    return _dumps(report.as_dict())


def as_jsonl(report: AuditReport) -> str:
    return "\n".join(_dumps(finding.as_dict(), indent=False) for finding in report.findings)


def display_path(path: str) -> str:
    """A stored (absolute) source path, relative to the working directory when it lies beneath it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def table(report: AuditReport) -> str:
    lines = []
    for f in report.findings:
        where = display_path(f.source_path) + (f" {f.locator}" if f.locator else "")
        lines.append(f"{f.severity:<7}  {f.rule:<20}  {where}\n         {f.detail}")
    s = report.summary
    share = s["validly_cited_share"]
    counts = s["findings_by_severity"]
    lines += [
        "",
        (f"{_count(counts['error'], 'error')}, {_count(counts['warning'], 'warning')} "
         f"in {_count(s['results'], 'result')} ({s['copies']} stored copies)"),
        (f"quantitative results {s['quantitative_results']}  cited {s['cited_results']}  "
         f"validly cited {s['validly_cited_results']} ({_percent(share)})  claims {s['claims']}"),
        "findings: " + "  ".join(f"{rule} {count}" for rule, count in s["findings"].items()),
    ]
    for title, key, name in (("per agent", "per_agent", "agent"), ("per study", "per_study", "study")):
        groups = [g for g in s[key] if g["quantitative_results"]]
        if groups:
            lines.append(f"validly cited {title}: " + "  ".join(
                f"{g[name] or '(none)'} {g['validly_cited_results']}/{g['quantitative_results']}" for g in groups))
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def sarif(report: AuditReport) -> str:
    from archiver import __version__

    rules = [{
        "id": rule.id, "name": rule.id,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "defaultConfiguration": {"level": rule.severity},
        "helpUri": TOOL_URI,
    } for rule in report.rules]
    index = {rule.id: position for position, rule in enumerate(report.rules)}
    run = {
        "tool": {"driver": {"name": "archiver", "version": __version__, "informationUri": TOOL_URI,
                            "rules": rules}},
        "originalUriBaseIds": {"CWD": {"uri": Path.cwd().as_uri() + "/"}},
        "results": [_sarif_result(f, index[f.rule]) for f in report.findings],
        "properties": {"summary": report.summary},
    }
    return _dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def _sarif_result(f: Finding, rule_index: int) -> dict:
    text = f.detail + (f" ({display_path(f.source_path)}, {f.locator})" if f.locator else "")
    result = {
        "ruleId": f.rule, "ruleIndex": rule_index, "level": f.severity, "message": {"text": text},
        "partialFingerprints": {"archiverFinding/v1": _fingerprint(f)},
        "properties": {key: value for key, value in f.as_dict().items()
                       if key not in ("rule", "severity", "detail") and value is not None},
    }
    location = _location(f)
    if location:
        result["locations"] = [location]
    return result


def _location(f: Finding) -> dict | None:
    if not os.path.isabs(f.source_path):
        return None
    shown = display_path(f.source_path)
    artifact = ({"uri": Path(shown).as_posix(), "uriBaseId": "CWD"} if shown != f.source_path
                else {"uri": Path(f.source_path).as_uri()})
    physical: dict = {"artifactLocation": artifact}
    if f.line:
        physical["region"] = {"startLine": f.line}
    location: dict = {"physicalLocation": physical}
    if f.result_key:
        location["logicalLocations"] = [{"fullyQualifiedName": f.result_key, "kind": "object"}]
    return location


def _fingerprint(f: Finding) -> str:
    identity = "\x1f".join(str(v) for v in (f.rule, f.result_key, f.source_path, f.locator, f.artifact_id,
                                            f.part_index, f.detail))
    return hashlib.sha256(identity.encode()).hexdigest()[:32]
