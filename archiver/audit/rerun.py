"""The re-run rules: a citation whose latest verification (`archiver verify`) re-derived
different numbers (`rerun-differs`), re-ran it over rows short of its fielded window or base n
(`rerun-partial`), over rows it could not narrow to its scope (`rerun-unscoped`), or could not re-run it
at all (`not-rerunnable`).

One finding per stored copy, in scope, that holds the citation. A result never verified raises
neither rule: run `archiver verify` before the audit to have them judged. A verdict made with a comparison
given on the command line (`--tolerance`) is not the data layer's: the rules judge by the latest verdict
made under the data layer's own comparison (`JUDGED_VERDICTS`).
"""

from __future__ import annotations

from ..store.views import JUDGED_VERDICTS

_LATEST = f"""
SELECT r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
       p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, NULL AS severity,
       {{sentence}} AS detail
FROM ({JUDGED_VERDICTS}) v
JOIN citations c ON c.result_key = v.result_key AND c.citation_hash = v.citation_hash
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path
WHERE v.verdict = '{{verdict}}' AND audit_copy_in_scope(c.copy_id)
"""

# `the citation extractFunnel(demo_flat, consider_b1) of task t1`
_CITATION = """'the citation ' || coalesce(nullif(c.source_function, ''), '?') || '('
    || coalesce(nullif(c.source_table, ''), '?') || ', ' || coalesce(nullif(c.source_column, ''), '?') || ') of '
    || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id))"""
_WHEN = "' (verified ' || coalesce(audit_iso(v.verified_at), '?') || ')'"

RERUN_DIFFERS = _LATEST.format(
    verdict="differs",
    sentence=f"'re-running ' || {_CITATION} || ' gives other numbers: ' || coalesce(v.reason, 'None') || {_WHEN}",
)
RERUN_PARTIAL = _LATEST.format(
    verdict="partial",
    sentence=f"'re-running ' || {_CITATION} || ' used rows short of it: ' || coalesce(v.reason, 'None') || {_WHEN}",
)
RERUN_UNSCOPED = _LATEST.format(
    verdict="unscoped",
    sentence=f"'re-running ' || {_CITATION} || ' could not apply its scope: ' || coalesce(v.reason, 'None') || {_WHEN}",
)
NOT_RERUNNABLE = _LATEST.format(
    verdict="not-rerunnable", sentence=f"{_CITATION} || ' cannot be re-run: ' || coalesce(v.reason, 'None') || {_WHEN}"
)
