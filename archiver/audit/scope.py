"""Which stored copies, agent cards and records (quarantined, or read and yielding nothing) an audit reports
on: a `Selection`.

It becomes three temporary tables (`audit_copies`, `audit_cards`, `audit_records`) and the macro
`audit_copy_in_scope(copy_id)` that every rule reads (TRUE when no filter applies to copies, so an
unfiltered audit reads no scope table); filter values are always bound parameters. A filter that cannot
be judged for a subject excludes it: an agent card or a quarantined record has no citation, task or time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..query.selection import Selection
from ..store import views

if TYPE_CHECKING:
    import duckdb

COPIES = f"""
CREATE OR REPLACE TEMP TABLE audit_copies AS
SELECT x.copy_id FROM ({views.copies()}) x
WHERE {{where}}"""

CARDS = """
CREATE OR REPLACE TEMP TABLE audit_cards AS
SELECT x.card_id FROM (SELECT *, name AS agent FROM agent_cards) x WHERE {where}"""

# A record's directory, for its agent (records keep only their file's path).
_DIRECTORY = "regexp_replace(x.source_path, '/[^/]*$', '')"

RECORDS = f"""
CREATE OR REPLACE TEMP TABLE audit_records AS
SELECT x.record_id
FROM ({views.with_agent("SELECT * FROM records WHERE status = 'quarantined' OR yields = 'nothing'", _DIRECTORY)}) x
WHERE {{where}}"""

# Whether a stored copy is in scope, when a filter applies to copies (else every copy is).
IN_SCOPE = "id IN (SELECT s.copy_id FROM audit_copies s)"


def materialize(con: duckdb.DuckDBPyConnection, selection: Selection) -> None:
    """(Re)create the scope tables and the `audit_copy_in_scope` macro on this connection."""
    copies = _copies(selection)
    if copies:
        _create(con, COPIES, copies)
    # Cards and quarantined records have an agent and a file, and nothing else a filter can judge.
    judged = Selection.of(agent=selection.agent, source=selection.source)
    others = [("FALSE", [])] if judged != selection else [judged.where("x.", scope="copy")]
    _create(con, CARDS, others)
    _create(con, RECORDS, others)
    con.execute(f"CREATE OR REPLACE TEMP MACRO audit_copy_in_scope(id) AS {IN_SCOPE if copies else 'TRUE'}")


def restrict(con: duckdb.DuckDBPyConnection, chosen: str) -> None:
    """A scope of every stored copy of the results `chosen` chooses (a condition on `result_key`), and no
    agent card or record: what a kept audit's refresh reports on (`audit.kept`)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE audit_copies AS SELECT copy_id FROM results WHERE {chosen}")
    _create(con, CARDS, [("FALSE", [])])
    _create(con, RECORDS, [("FALSE", [])])
    con.execute(f"CREATE OR REPLACE TEMP MACRO audit_copy_in_scope(id) AS {IN_SCOPE}")


def _create(con: duckdb.DuckDBPyConnection, template: str, conditions: list[tuple[str, list]]) -> None:
    con.execute(
        template.format(where=" AND ".join(c for c, _ in conditions) or "TRUE"),
        [value for _, values in conditions for value in values],
    )


def _copies(selection: Selection) -> list[tuple[str, list]]:
    """The conditions on a stored copy: its own (agent, task, time, source), and a citation filter
    keeps the copies of results that hold a matching citation in some copy."""
    conditions = []
    if selection.chooses_copies():
        conditions.append(selection.where("x.", scope="copy"))
    if selection.chooses_citations():
        where, params = selection.where("c.", scope="citation")
        conditions.append((f"x.result_key IN (SELECT c.result_key FROM citations c WHERE {where})", params))
    return conditions
