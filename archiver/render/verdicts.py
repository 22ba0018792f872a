"""A verification report as a `Listing`, which every output format renders (`archiver.render.formats`)."""

from __future__ import annotations

from datetime import datetime

from ..query.listing import Listing
from ..verify.run import VERDICTS, CitationVerdict, VerifyReport

LABELS = {
    "reproduced": "reproduced",
    "differs": "DIFFERS",
    "partial": "PARTIAL",
    "unscoped": "UNSCOPED",
    "not-rerunnable": "NOT-RERUNNABLE",
    None: "unverified",
}


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
    if v["rows_used"]:
        lines.append(f"{'':<15} {v['rows_used']}; compared {v['comparison']}")
    if v["coverage"]:
        lines.append(f"{'':<15} {v['coverage']}")
    if _note(v):
        lines.append(f"{'':<15} {_note(v)}")
    return "".join(line + "\n" for line in lines)


def _footer(report: VerifyReport) -> str:
    s = report.summary()
    counts = ", ".join(_counted(s[name], WORDS[name]) for name in VERDICTS if s[name])
    if report.run_id is None and s["unverified"]:
        counts = ", ".join(filter(None, (counts, _counted(s["unverified"], ("never verified", "never verified")))))
    lines = ["", f"{_counted(s['citations'], ('citation', 'citations'))}" + (f": {counts}" if counts else "")]
    if s["skipped_other_studies"]:
        skipped = s["skipped_other_studies"]
        lines.append(
            f"{_counted(skipped, ('citation', 'citations'))} skipped: "
            + ("its study is" if skipped == 1 else "their studies are")
            + " outside the data layer"
        )
    if s["stale"]:
        before = " before this run" if report.run_id else ""
        lines.append(
            f"STALE: {_counted(s['stale'], ('verdict', 'verdicts'))}{before} "
            + ("rests" if s["stale"] == 1 else "rest")
            + " on a data layer whose tables or extractors have changed since"
        )
    if s["kept"]:
        lines.append(
            f"resumed: {_counted(s['kept'], ('current verdict', 'current verdicts'))} of the interrupted run kept, "
            "not run again (--no-resume runs every citation)"
        )
    if report.data_layer:
        lines.append(f"data layer: {report.data_layer} (sha256 {report.data_layer_sha256[:16]})")
    return "\n".join(lines) + "\n"


# Each verdict's words in the summary: (one, several).
WORDS = {
    "reproduced": ("reproduced", "reproduced"),
    "differs": ("differs", "differ"),
    "partial": ("partial (rows short of the citation)", "partial (rows short of the citation)"),
    "unscoped": ("unscoped (its scope could not be applied)", "unscoped (their scope could not be applied)"),
    "not-rerunnable": ("cannot be re-run", "cannot be re-run"),
}


def _counted(count: int, words: tuple[str, str]) -> str:
    return f"{count:,} {words[0] if count == 1 else words[1]}"


def _result(v: dict) -> str:
    return f"task {v['task_id']}" if v["result_kind"] == "task" else f"message {v['message_id']}"


def _source(v: dict) -> str:
    return (
        f"{v['source_function'] or '?'}({v['source_table'] or '?'}, {v['source_column'] or '?'}) · "
        f"{v['study'] or '?'} · {v['period'] or '?'}"
    )


def _note(v: dict) -> str:
    if v["kept"]:
        return f"kept: verified {_when(v['verified_at'])} by the interrupted run and current, so not run again"
    if v["previous_stale"]:
        return f"was {v['previous']} ({_when(v['previous_at'])}) with a data layer that has changed since: STALE"
    if v["stale"]:
        because = f" ({v['stale_because']})" if v["stale_because"] else ""
        return (
            f"verified {_when(v['verified_at'])} with a data layer that has changed since{because}: "
            "STALE, run verify again"
        )
    if v["verified_at"] and v["previous"] is None and v["stale"] is False:
        return f"verified {_when(v['verified_at'])}; the data layer is unchanged since"
    return ""


def _when(moment: str | None) -> str:
    """An ISO-8601 moment to the second."""
    return datetime.fromisoformat(moment).isoformat(timespec="seconds") if moment else "?"
