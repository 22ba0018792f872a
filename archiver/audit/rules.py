"""The audit's rules: one set-based query over the index per rule, plus the sentence a finding reads as.

Every query reads the scope tables made by `archiver.audit.scope` (`audit_copies`,
`audit_cards`, `audit_records`) to decide which findings to report, but judges
against the whole archive: a copy outside the scope still counts as "another
copy" of a result, and a citation anywhere still makes a result cited.

Each query returns the finding columns (`result_key`, `task_id`, `message_id`,
`context_id`, `artifact_id`, `part_index`, `source_path`, `locator`, `line`),
optionally `severity`, and the columns its `detail` sentence needs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import rerun

ERROR = "error"
WARNING = "warning"

# The stored copy's first record: where a person finds the copy in its source file.
_COPY_RECORD = "LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path"

# Where a Part sits, for findings about one Part.
_PART_COLUMNS = """
    r.result_key, r.kind AS result_kind, r.task_id, coalesce(p.message_id, r.message_id) AS message_id,
    r.context_id, p.artifact_id, p.part_index, p.location, coalesce(p.artifact_name, p.artifact_id) AS artifact,
    r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line"""

UNCITED_RESULT = f"""
WITH uncited AS MATERIALIZED (
    SELECT r.copy_id FROM results r
    WHERE r.result_key IN (SELECT result_key FROM results WHERE terminal)
      AND r.copy_id IN (SELECT copy_id FROM audit_copies)
      AND r.copy_id IN (SELECT copy_id FROM claims)
      AND NOT EXISTS (SELECT 1 FROM citations c WHERE c.result_key = r.result_key)
),
quantitative AS (
    SELECT cl.copy_id, count(*) AS numbers, min(p.ordinal) AS first_ordinal,
           list(DISTINCT coalesce(p.artifact_name, p.artifact_id)) FILTER (WHERE p.location = 'artifact')
               AS artifacts,
           count(*) FILTER (WHERE p.location = 'message') AS numbers_in_messages
    FROM claims cl
    JOIN parts p ON p.part_id = cl.part_id
    WHERE cl.copy_id IN (SELECT copy_id FROM uncited)
    GROUP BY cl.copy_id
)
SELECT {_PART_COLUMNS}, q.numbers, q.artifacts, q.numbers_in_messages
FROM quantitative q
JOIN results r ON r.copy_id = q.copy_id
JOIN parts p ON p.copy_id = q.copy_id AND p.ordinal = q.first_ordinal
{_COPY_RECORD}
"""

INVALID_CITATION = f"""
SELECT {_PART_COLUMNS}, c.problems
FROM citations c
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
{_COPY_RECORD}
WHERE NOT c.valid AND c.copy_id IN (SELECT copy_id FROM audit_copies)
"""

CITATION_TYPE_LOST = f"""
SELECT {_PART_COLUMNS}, p.media_type,
       list_filter(['study', 'period', 'base', 'source'], k -> json_exists(p.data, '$.' || k)) AS keys
FROM citations c
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
{_COPY_RECORD}
WHERE c.inferred AND c.copy_id IN (SELECT copy_id FROM audit_copies)
"""

# For every result stored more than once: the Part contents (canonical hashes) each copy
# holds; the copies in scope, terminal, that hold fewer than their result does; for those,
# each content another copy holds, whether it is a citation there, and one copy holding it
# (a terminal one first) to point the reader at.
DROPPED_PART = f"""
WITH copied AS (
    SELECT result_key FROM results GROUP BY result_key HAVING count(*) > 1
),
held AS MATERIALIZED (
    SELECT DISTINCT p.copy_id, p.result_key, p.content_hash
    FROM parts p
    WHERE p.role = 'agent' AND p.result_key IN (SELECT result_key FROM copied)
),
short AS MATERIALIZED (
    SELECT r.copy_id, r.result_key
    FROM results r
    JOIN (SELECT result_key, count(DISTINCT content_hash) AS n FROM held GROUP BY result_key) whole
      ON whole.result_key = r.result_key
    LEFT JOIN (SELECT copy_id, count(*) AS n FROM held GROUP BY copy_id) mine ON mine.copy_id = r.copy_id
    WHERE r.terminal AND coalesce(mine.n, 0) < whole.n
      AND r.copy_id IN (SELECT copy_id FROM audit_copies)
),
missing AS (
    SELECT s.copy_id, h.result_key, h.content_hash
    FROM short s
    JOIN (SELECT DISTINCT result_key, content_hash FROM held
          WHERE result_key IN (SELECT result_key FROM short)) h ON h.result_key = s.result_key
    WHERE NOT EXISTS (
        SELECT 1 FROM held mine WHERE mine.copy_id = s.copy_id AND mine.content_hash = h.content_hash
    )
),
examples AS (
    SELECT p.result_key, p.content_hash, bool_or(p.is_citation) AS citation,
           arg_min(p.part_id, (NOT holder.terminal, p.source_path, p.ordinal)) AS example
    FROM parts p
    JOIN (SELECT DISTINCT result_key, content_hash FROM missing) wanted
      ON wanted.result_key = p.result_key AND wanted.content_hash = p.content_hash
    JOIN results holder ON holder.copy_id = p.copy_id
    WHERE p.role = 'agent' AND p.result_key IN (SELECT result_key FROM short)
    GROUP BY p.result_key, p.content_hash
)
SELECT r.result_key, r.kind AS result_kind, r.task_id, coalesce(e.message_id, r.message_id) AS message_id,
       r.context_id, e.artifact_id, e.part_index, e.location, coalesce(e.artifact_name, e.artifact_id) AS artifact,
       r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line, r.state,
       CASE WHEN x.citation THEN 'error' ELSE 'warning' END AS severity,
       x.citation, e.kind AS part_kind, holder.source_path AS holder_path, holder.state AS holder_state
FROM missing m
JOIN results r ON r.copy_id = m.copy_id
JOIN examples x ON x.result_key = m.result_key AND x.content_hash = m.content_hash
JOIN parts e ON e.part_id = x.example
JOIN results holder ON holder.copy_id = e.copy_id
{_COPY_RECORD}
"""

CARD_MODE_UNDECLARED = """
SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, c.source_path, rec.locator, rec.line, c.name, c.declares_extension
FROM agent_cards c
LEFT JOIN records rec ON rec.record_id = c.record_id AND rec.source_path = c.source_path
WHERE c.declares_extension <> c.lists_media_type
  AND c.card_id IN (SELECT card_id FROM audit_cards)
"""

SMALL_BASE = f"""
SELECT {_PART_COLUMNS}, c.base_n, c.base_name, c.study, $min_base AS min_base
FROM citations c
JOIN parts p ON p.part_id = c.part_id
JOIN results r ON r.copy_id = c.copy_id
{_COPY_RECORD}
WHERE c.base_n > 0 AND c.base_n = floor(c.base_n) AND c.base_n < $min_base
  AND c.copy_id IN (SELECT copy_id FROM audit_copies)
"""

UNREADABLE_RECORD = """
SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, rec.source_path, rec.locator, rec.line, rec.reason
FROM records rec
WHERE rec.status = 'quarantined' AND rec.record_id IN (SELECT record_id FROM audit_records)
"""


def _quote(text: str | None) -> str:
    return f'"{text}"' if text is not None else "(unnamed)"


def _result(row: dict) -> str:
    if row["result_kind"] == "message":
        return f"message {row['message_id']}"
    return f"task {row['task_id']}"


def _part_place(row: dict) -> str:
    if row["location"] == "artifact":
        return f"Part {row['part_index']} of artifact {_quote(row['artifact'])}"
    return f"Part {row['part_index']} of agent message {row['message_id'] or '(no id)'}"


def _numbers(count: int) -> str:
    return f"{count} number" + ("" if count == 1 else "s")


def _uncited(row: dict) -> str:
    artifacts = sorted(row["artifacts"] or [], key=str)
    places = []
    if artifacts:
        noun = "artifact" if len(artifacts) == 1 else "artifacts"
        places.append(f"{noun} " + ", ".join(_quote(a) for a in artifacts))
    if row["numbers_in_messages"]:
        places.append("an agent message")
    where = f" in {' and '.join(places)}" if places else ""
    return f"{_result(row)} states {_numbers(row['numbers'])}{where} and carries no citation Part"


def _invalid(row: dict) -> str:
    problems = "; ".join(row["problems"] or []) or "fails the spec"
    return f"citation {_part_place(row)} in {_result(row)} fails Citations v1: {problems}"


def _type_lost(row: dict) -> str:
    found = f"media type {row['media_type']}" if row["media_type"] else "no media type"
    keys = ", ".join(row["keys"] or [])
    return (f"data {_part_place(row)} in {_result(row)} carries a citation's fields ({keys}) but {found}, "
            "so consumers do not recognise it as a citation")


def _dropped(row: dict) -> str:
    what = "citation Part" if row["citation"] else f"{row['part_kind']} Part"
    holder_place = (f"artifact {_quote(row['artifact'])}" if row["location"] == "artifact"
                    else f"agent message {row['message_id'] or '(no id)'}")
    return (f"this {row['state'] or 'terminal'} copy of {_result(row)} lacks the {what} that the "
            f"{row['holder_state'] or 'stored'} copy in {row['holder_path']} holds "
            f"(Part {row['part_index']} of {holder_place})")


def _card(row: dict) -> str:
    if row["declares_extension"]:
        return (f"agent card {_quote(row['name'])} declares the Citations v1 extension but lists its media type "
                "in neither defaultOutputModes nor any skill's outputModes")
    return (f"agent card {_quote(row['name'])} lists the citations media type among its output modes "
            "but does not declare the Citations v1 extension")


def _small_base(row: dict) -> str:
    return (f"citation {_part_place(row)} in {_result(row)} rests on base {_quote(row['base_name'])} "
            f"of n = {row['base_n']:g}, below the minimum base of {row['min_base']:g}")


def _unreadable(row: dict) -> str:
    return f"record at {row['locator']} was quarantined at ingest ({row['reason']}); it may hide a result"


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the default; a query may return a `severity` column of its own
    summary: str
    sql: str
    detail: Callable[[dict[str, Any]], str]


RULES: tuple[Rule, ...] = (
    Rule("uncited-result", ERROR,
         "A finished result states numbers (quantitative JSON) and no copy of it carries a citation Part, "
         "typed or probable.",
         UNCITED_RESULT, _uncited),
    Rule("invalid-citation", ERROR,
         "A citation Part misses a required field, has one null or of the wrong type, "
         "or its base.n is not a positive integer.",
         INVALID_CITATION, _invalid),
    Rule("citation-type-lost", ERROR,
         "A stored copy holds a probable citation (three or more of study, period, base, source) "
         "without the citations media type.",
         CITATION_TYPE_LOST, _type_lost),
    Rule("dropped-part", ERROR,
         "A stored copy of a result in a terminal state lacks a Part (by content) that another stored copy "
         "of the same result holds; an error for a citation Part, a warning for any other.",
         DROPPED_PART, _dropped),
    Rule("card-mode-undeclared", WARNING,
         "An agent card declares the Citations v1 extension without listing its media type in an output mode, "
         "or lists the media type without declaring the extension.",
         CARD_MODE_UNDECLARED, _card),
    Rule("small-base", WARNING,
         "A citation's base.n is below the minimum base (--min-base, default 30).",
         SMALL_BASE, _small_base),
    Rule("unreadable-record", ERROR,
         "A record was quarantined at ingest: it may hide a result.",
         UNREADABLE_RECORD, _unreadable),
    Rule("rerun-differs", ERROR,
         "The latest `archiver verify` re-derived a citation's numbers from the data layer and they differ "
         "from the claims of its result.",
         rerun.RERUN_DIFFERS, rerun.rerun_differs),
    Rule("not-rerunnable", WARNING,
         "The latest `archiver verify` could not re-run a citation: unknown function, missing table or column, "
         "or the extractor failed or timed out.",
         rerun.NOT_RERUNNABLE, rerun.not_rerunnable),
)

RULES_BY_ID = {rule.id: rule for rule in RULES}


def select_rules(only: tuple[str, ...] | list[str] = (), exclude: tuple[str, ...] | list[str] = ()) -> list[Rule]:
    """The rules to run, in their stable order; unknown ids raise ValueError."""
    unknown = [name for name in (*only, *exclude) if name not in RULES_BY_ID]
    if unknown:
        raise ValueError(f"unknown rule {', '.join(unknown)} (known: {', '.join(RULES_BY_ID)})")
    return [rule for rule in RULES if (not only or rule.id in only) and rule.id not in exclude]
