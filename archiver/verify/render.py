"""A verification report as a table for people, JSON or JSON Lines."""

from __future__ import annotations

import orjson

from .run import VERDICTS, CitationVerdict, VerifyReport

FORMATS = ("table", "json", "jsonl")
LABELS = {"reproduced": "reproduced", "differs": "DIFFERS", "not-rerunnable": "NOT-RERUNNABLE", None: "unverified"}


def render(report: VerifyReport, fmt: str) -> str:
    if fmt == "json":
        return orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2, default=str).decode()
    if fmt == "jsonl":
        return "\n".join(orjson.dumps(v.as_dict(), default=str).decode() for v in report.verdicts)
    return table(report)


def table(report: VerifyReport) -> str:
    lines = []
    for v in report.verdicts:
        lines.append(f"{LABELS[v.verdict]:<15} {_result(v):<32} {_source(v)}")
        if v.reason:
            lines.append(f"{'':<15} {v.reason}")
        lines += [f"{'':<15} {_note(v)}"] if _note(v) else []
    s = report.summary()
    counts = ", ".join(f"{s[name]} {name}" for name in VERDICTS)
    lines += [
        "",
        (
            f"{s['citations']} citations: {counts}"
            + (f", {s['unverified']} never verified" if report.run_id is None else "")
            + (
                f"; {s['skipped_other_studies']} of studies outside the data layer skipped"
                if s["skipped_other_studies"]
                else ""
            )
        ),
    ]
    if s["stale"]:
        before = "before this run " if report.run_id else ""
        lines.append(
            f"STALE: {s['stale']} verdicts {before}rest on a data layer whose tables or extractors have changed since"
        )
    if report.data_layer:
        lines.append(f"data layer: {report.data_layer} (sha256 {report.data_layer_sha256[:16]})")
    return "\n".join(lines)


def _result(v: CitationVerdict) -> str:
    return f"task {v.task_id}" if v.result_kind == "task" else f"message {v.message_id}"


def _source(v: CitationVerdict) -> str:
    return (
        f"{v.source_function or '?'}({v.source_table or '?'}, {v.source_column or '?'}) · {v.study or '?'} · "
        f"{v.period or '?'}"
    )


def _note(v: CitationVerdict) -> str:
    if v.previous_stale:
        return f"was {v.previous} ({_when(v.previous_at)}) with a data layer that has changed since: STALE"
    if v.stale:
        return f"verified {_when(v.verified_at)} with a data layer that has changed since: STALE, run verify again"
    if v.verified_at and v.previous is None and v.stale is False:
        return f"verified {_when(v.verified_at)}; the data layer is unchanged since"
    return ""


def _when(moment) -> str:
    return moment.isoformat(timespec="seconds") if moment else "?"
