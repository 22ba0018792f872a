"""SQL macros that spell a finding: its sentence (`detail`) and its values as JSON text.

The rules write each finding's sentence in SQL, and the renderers write JSON in SQL, so an
audit of millions of claims never builds a Python object per finding. The macros are
temporary, made on the audit's connection; `json_text` writes a string exactly as orjson
does (DuckDB's `to_json` spells a control character's escape in capitals, orjson in lower case).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

_SHORT_ESCAPES = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}


def _escape(code: int) -> str:
    return _SHORT_ESCAPES.get(code) or f"\\u{code:04x}"


def _escaped(expression: str) -> str:
    """`expression` with backslash, quote and every control character escaped as orjson does."""
    escaped = f"replace(replace({expression}, '\\', '\\\\'), '\"', '\\\"')"
    for code in range(32):
        escaped = f"replace({escaped}, chr({code}), '{_escape(code)}')"
    return escaped


MACROS = {
    # A name in quotes, or (unnamed).
    "audit_quote": ("t", "CASE WHEN t IS NULL THEN '(unnamed)' ELSE '\"' || t || '\"' END"),
    # What a finding is about: `task <id>` or `message <id>`.
    "audit_result": (
        "kind, task_id, message_id",
        (
            "CASE WHEN kind = 'message' THEN 'message ' || coalesce(message_id, 'None') "
            "ELSE 'task ' || coalesce(task_id, 'None') END"
        ),
    ),
    "audit_message": ("message_id", "'agent message ' || coalesce(nullif(message_id, ''), '(no id)')"),
    # Where a Part sits: `Part 2 of artifact "answer"` or `Part 1 of agent message m-1`.
    "audit_part_place": (
        "location, part_index, artifact, message_id",
        (
            "'Part ' || coalesce(CAST(part_index AS VARCHAR), 'None') || ' of ' || "
            "CASE WHEN location = 'artifact' THEN 'artifact ' || audit_quote(artifact) "
            "ELSE audit_message(message_id) END"
        ),
    ),
    # dropped-part's sentence: against the origin copy (the agent sent the Part), else against another copy.
    "audit_dropped": (
        "origin, state, result, kind, holder_state, holder_path, place",
        (
            "CASE WHEN origin THEN 'the agent sent this Part; this ' || state || ' copy of ' || result "
            "|| ' lacks it: the ' || kind || ' Part (' || place || ') that the origin copy recorded in ' "
            "|| holder_path || ' holds' "
            "ELSE 'this ' || state || ' copy of ' || result || ' lacks the ' || kind || ' Part that the ' "
            "|| holder_state || ' copy in ' || holder_path || ' holds (' || place || ')' END"
        ),
    ),
    # A number as Python's format(x, 'g') writes it (C's %g).
    "audit_g": ("x", "printf('%g', x)"),
    # A timestamp as Python's datetime.isoformat(timespec='seconds') writes it, in the session's time zone.
    "audit_iso": (
        "ts",
        ("strftime(ts, '%Y-%m-%dT%H:%M:%S') || audit_offset(CAST(epoch(CAST(ts AS TIMESTAMP)) - epoch(ts) AS BIGINT))"),
    ),
    "audit_offset": (
        "s",
        (
            "CASE WHEN s < 0 THEN '-' ELSE '+' END || lpad(CAST(abs(s) // 3600 AS VARCHAR), 2, '0') "
            "|| ':' || lpad(CAST(abs(s) % 3600 // 60 AS VARCHAR), 2, '0') "
            "|| CASE WHEN abs(s) % 60 = 0 THEN '' "
            "ELSE ':' || lpad(CAST(abs(s) % 60 AS VARCHAR), 2, '0') END"
        ),
    ),
    # A value as JSON text; null for NULL.
    "json_text": ("s", "CASE WHEN s IS NULL THEN 'null' ELSE json_checked(to_json(s), s) END"),
    # to_json's text unless it holds a \u escape, rare, then the string escaped by hand.
    "json_checked": ("j, s", "CASE WHEN contains(j, '\\u') THEN '\"' || " + _escaped("s") + " || '\"' ELSE j END"),
    "json_int": ("i", "coalesce(CAST(i AS VARCHAR), 'null')"),
}


def define(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the macros on this connection."""
    for name, (params, body) in MACROS.items():
        con.execute(f"CREATE OR REPLACE TEMP MACRO {name}({params}) AS {body}")
