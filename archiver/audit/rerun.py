"""The re-run rules (issue 8): a citation whose latest verification (`archiver verify`) re-derived
different numbers (`rerun-differs`), or could not re-run it at all (`not-rerunnable`).

One finding per stored copy, in scope, that holds the citation. A result never verified raises
neither rule: run `archiver verify` before the audit to have them judged.
"""
from __future__ import annotations

_LATEST = """
SELECT r.result_key, r.kind AS result_kind, r.task_id, coalesce(p.message_id, r.message_id) AS message_id,
       r.context_id, p.artifact_id, p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator,
       rec.line, v.reason, v.verified_at, c.source_function, c.source_table, c.source_column
FROM latest_verdicts v
JOIN citations c ON c.result_key = v.result_key AND c.citation_hash = v.citation_hash
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
WHERE v.verdict = '{verdict}' AND c.copy_id IN (SELECT copy_id FROM audit_copies)
"""

RERUN_DIFFERS = _LATEST.format(verdict="differs")
NOT_RERUNNABLE = _LATEST.format(verdict="not-rerunnable")


def _citation(row: dict) -> str:
    result = f"message {row['message_id']}" if row["result_kind"] == "message" else f"task {row['task_id']}"
    return (f"the citation {row['source_function'] or '?'}({row['source_table'] or '?'}, "
            f"{row['source_column'] or '?'}) of {result}")


def _when(row: dict) -> str:
    return row["verified_at"].isoformat(timespec="seconds") if row["verified_at"] else "?"


def rerun_differs(row: dict) -> str:
    return f"re-running {_citation(row)} gives other numbers: {row['reason']} (verified {_when(row)})"


def not_rerunnable(row: dict) -> str:
    return f"{_citation(row)} cannot be re-run: {row['reason']} (verified {_when(row)})"
