"""A verification report as a `Listing`, which every output format renders (`archiver.render.formats`)."""

from __future__ import annotations

from datetime import datetime

from ..render.listing import Listing
from .run import VERDICTS, CitationVerdict, VerifyReport

LABELS = {"reproduced": "reproduced", "differs": "DIFFERS", "not-rerunnable": "NOT-RERUNNABLE", None: "unverified"}


def listing(report: VerifyReport) -> Listing:
    """The report's verdicts in order, with its summary (held as a list, as the report holds them)."""
    return Listing(
        tuple(CitationVerdict.__dataclass_fields__),
        [verdict.as_dict() for verdict in report.verdicts],
        name="verdicts",
        summary=report.summary(),
        record=_record,
        footer=lambda: _footer(report),
    )


def _record(v: dict) -> str:
    """A verdict for people: the verdict, the result and the citation's source, then why and how fresh."""
    lines = [f"{LABELS[v['verdict']]:<15} {_result(v):<32} {_source(v)}"]
    if v["reason"]:
        lines.append(f"{'':<15} {v['reason']}")
    if _note(v):
        lines.append(f"{'':<15} {_note(v)}")
    return "".join(line + "\n" for line in lines)


def _footer(report: VerifyReport) -> str:
    s = report.summary()
    counts = ", ".join(f"{s[name]} {name}" for name in VERDICTS)
    lines = [
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
    return "\n".join(lines) + "\n"


def _result(v: dict) -> str:
    return f"task {v['task_id']}" if v["result_kind"] == "task" else f"message {v['message_id']}"


def _source(v: dict) -> str:
    return (
        f"{v['source_function'] or '?'}({v['source_table'] or '?'}, {v['source_column'] or '?'}) · "
        f"{v['study'] or '?'} · {v['period'] or '?'}"
    )


def _note(v: dict) -> str:
    if v["previous_stale"]:
        return f"was {v['previous']} ({_when(v['previous_at'])}) with a data layer that has changed since: STALE"
    if v["stale"]:
        return f"verified {_when(v['verified_at'])} with a data layer that has changed since: STALE, run verify again"
    if v["verified_at"] and v["previous"] is None and v["stale"] is False:
        return f"verified {_when(v['verified_at'])}; the data layer is unchanged since"
    return ""


def _when(moment: str | None) -> str:
    """An ISO-8601 moment to the second."""
    return datetime.fromisoformat(moment).isoformat(timespec="seconds") if moment else "?"
