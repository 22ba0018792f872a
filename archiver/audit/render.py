"""An audit as a table for people, JSON, JSON Lines, or SARIF 2.1.0 for code hosts.

Findings are written as DuckDB spells them, in order, batch by batch: one string per finding
and no other Python object, and memory bounded by one batch however many findings there are. What surrounds them
(the summary, SARIF's rules) is written by orjson,
and the findings are spelt exactly as orjson would spell them there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import orjson

from .run import ORDER

if TYPE_CHECKING:
    from .run import Audit

FORMATS = ("table", "json", "jsonl", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://standards.upperhandai.com/ext/citations/v1"
BATCH_ROWS = 20_000


def write(audit: Audit, fmt: str, out: BinaryIO) -> None:
    """Write the audit to `out` in `fmt`, newline-terminated (nothing at all for JSON Lines without findings)."""
    _display_paths(audit)
    try:
        {"table": _table, "json": _json, "jsonl": _jsonl, "sarif": _sarif}[fmt](audit, out)
    finally:
        audit.con.execute("DROP TABLE IF EXISTS audit_paths")


def _dumps(value, indent: bool = True) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0, default=str)


def display_path(path: str) -> str:
    """A stored (absolute) source path, relative to the working directory when it lies beneath it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def _artifact_location(path: str) -> str | None:
    """SARIF's artifactLocation of a source file, as JSON at the depth a finding's location holds it."""
    if not os.path.isabs(path):
        return None
    shown = display_path(path)
    pad = " " * 18
    if shown != path:
        return f'{{\n{pad}"uri": {_dumps(Path(shown).as_posix()).decode()},\n{pad}"uriBaseId": "CWD"\n{" " * 16}}}'
    return f'{{\n{pad}"uri": {_dumps(Path(path).as_uri()).decode()}\n{" " * 16}}}'


def _display_paths(audit: Audit) -> None:
    """`audit_paths`: each source file with findings, as shown to people and as a SARIF artifact location."""
    paths = [row[0] for row in audit.con.execute("SELECT DISTINCT source_path FROM audit_findings").fetchall()]
    rows = [[path, display_path(path), _artifact_location(path)] for path in paths]
    audit.con.execute(  # one JSON text: DuckDB binds a list parameter value by value, slowly
        "CREATE OR REPLACE TEMP TABLE audit_paths AS SELECT r[1] AS source_path, r[2] AS shown, r[3] AS artifact "
        "FROM (SELECT unnest(CAST(json(?) AS VARCHAR[][])) AS r)",
        [orjson.dumps(rows).decode()],
    )


def _stream(audit: Audit, text: str, out: BinaryIO, skip: int = 0) -> bool:
    """Write `text` (an SQL expression over a finding) for each finding in order, in batches; skip the
    first `skip` characters. Whether there was a finding."""
    cursor = audit.con.execute(
        f"SELECT {text} AS text FROM audit_findings f LEFT JOIN audit_paths d USING (source_path) ORDER BY {ORDER}"
    )
    first = True
    while rows := cursor.fetchmany(BATCH_ROWS):
        chunk = "".join([row[0] for row in rows])
        out.write((chunk[skip:] if first else chunk).encode())
        first = False
    return not first


def _table(audit: Audit, out: BinaryIO) -> None:
    _stream(
        audit,
        _concat(
            _Sql("rpad(f.severity, 7, ' ')"),
            "  ",
            _Sql("rpad(f.rule, 20, ' ')"),
            "  ",
            _Sql("d.shown"),
            _Sql("CASE WHEN coalesce(f.locator, '') = '' THEN '' ELSE ' ' || f.locator END"),
            "\n         ",
            _Sql("f.detail"),
            "\n",
        ),
        out,
    )
    s = audit.summary
    share = s["validly_cited_share"]
    counts = s["findings_by_severity"]
    lines = [
        "",
        (
            f"{_count(counts['error'], 'error')}, {_count(counts['warning'], 'warning')} "
            f"in {_count(s['results'], 'result')} ({s['copies']} stored copies)"
        ),
        (
            f"quantitative results {s['quantitative_results']}  cited {s['cited_results']}  "
            f"validly cited {s['validly_cited_results']} ({_percent(share)})  claims {s['claims']}"
        ),
        "findings: " + "  ".join(f"{rule} {count}" for rule, count in s["findings"].items()),
    ]
    for title, key, name in (("per agent", "per_agent", "agent"), ("per study", "per_study", "study")):
        groups = [g for g in s[key] if g["quantitative_results"]]
        if groups:
            lines.append(
                f"validly cited {title}: "
                + "  ".join(
                    f"{g[name] or '(none)'} {g['validly_cited_results']}/{g['quantitative_results']}" for g in groups
                )
            )
    out.write(("\n".join(lines) + "\n").encode())


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


class _Sql(str):
    """An SQL expression among the pieces of `_concat` (a plain str there is literal text)."""


def _concat(*pieces: str) -> _Sql:
    """One SQL `concat` of literal text and expressions: one string built per row, not one per `||`."""
    merged: list[str] = []
    for piece in pieces:
        if not isinstance(piece, _Sql) and merged and not isinstance(merged[-1], _Sql):
            merged[-1] += piece
        else:
            merged.append(piece)
    return _Sql(
        "concat(" + ", ".join(p if isinstance(p, _Sql) else "'" + p.replace("'", "''") + "'" for p in merged) + ")"
    )


def _value(name: str) -> _Sql:
    return _Sql(f"json_int(f.{name})" if name == "part_index" else f"json_text(f.{name})")


# A finding's published fields (`line` stays internal: the locator says it), as JSON members.
_MEMBERS = (
    "rule",
    "severity",
    "result_key",
    "task_id",
    "message_id",
    "context_id",
    "artifact_id",
    "part_index",
    "source_path",
    "locator",
    "detail",
)


def _object(depth: int | None) -> _Sql:
    """A finding as a JSON object, indented as orjson indents it `depth` levels down (compact for None)."""
    pieces: list[str] = ["{"]
    for position, name in enumerate(_MEMBERS):
        separator = "," if position else ""
        if depth is None:
            pieces += [f'{separator}"{name}":', _value(name)]
        else:
            pieces += [f'{separator}\n{" " * (2 * depth + 2)}"{name}": ', _value(name)]
    pieces.append("}" if depth is None else "\n" + " " * (2 * depth) + "}")
    return _concat(*pieces)


def _spliced(out: BinaryIO, skeleton: bytes, empty: bytes, write_items, close: bytes) -> None:
    """Write `skeleton` with its `empty` list replaced by the streamed items (or left empty without any)."""
    before, after = skeleton.split(empty, 1)
    opening = empty[:-1]
    out.write(before + opening)
    if write_items():
        out.write(close)
    else:
        out.write(b"]")
    out.write(after + b"\n")


def _json(audit: Audit, out: BinaryIO) -> None:
    skeleton = _dumps({"findings": [], "summary": audit.summary})
    _spliced(
        out, skeleton, b'"findings": []', lambda: _stream(audit, _concat(",\n    ", _object(2)), out, skip=1), b"\n  ]"
    )


def _jsonl(audit: Audit, out: BinaryIO) -> None:
    if _stream(audit, _concat("\n", _object(None)), out, skip=1):
        out.write(b"\n")


def _sarif(audit: Audit, out: BinaryIO) -> None:
    from archiver import __version__

    rules = [
        {
            "id": rule.id,
            "name": rule.id,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.summary},
            "defaultConfiguration": {"level": rule.severity},
            "helpUri": TOOL_URI,
        }
        for rule in audit.rules
    ]
    run = {
        "tool": {"driver": {"name": "archiver", "version": __version__, "informationUri": TOOL_URI, "rules": rules}},
        "originalUriBaseIds": {"CWD": {"uri": Path.cwd().as_uri() + "/"}},
        "results": [],
        "properties": {"summary": audit.summary},
    }
    skeleton = _dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})
    ids = "[" + ", ".join(f"'{rule.id}'" for rule in audit.rules) + "]"
    _spliced(
        out,
        skeleton,
        b'"results": []',
        lambda: _stream(audit, _concat(",\n        ", _sarif_result(ids)), out, skip=1),
        b"\n      ]",
    )


def _sarif_result(rule_ids: str) -> _Sql:
    """A finding as a SARIF result, indented as orjson indents it in `runs[0].results`."""

    def line(depth: int, text: str = "") -> str:
        return "\n" + " " * depth + text

    message = _concat(
        _Sql("f.detail"),
        _Sql(
            "CASE WHEN coalesce(f.locator, '') = '' THEN '' ELSE "
            + _concat(" (", _Sql("d.shown"), ", ", _Sql("f.locator"), ")")
            + " END"
        ),
    )
    identity = _Sql(
        "concat_ws(chr(31), f.rule, coalesce(f.result_key, 'None'), f.source_path, "
        "coalesce(f.locator, 'None'), coalesce(f.artifact_id, 'None'), "
        "coalesce(CAST(f.part_index AS VARCHAR), 'None'), f.detail)"
    )
    properties = _Sql(
        "concat_ws(',', "
        + ", ".join(
            f"CASE WHEN f.{name} IS NOT NULL THEN " + _concat(line(12, '"' + name + '": '), _value(name)) + " END"
            for name in _MEMBERS
            if name not in ("rule", "severity", "detail")
        )
        + ")"
    )
    region = _Sql(
        "CASE WHEN coalesce(f.line, 0) <> 0 THEN "
        + _concat(
            "," + line(16, '"region": {') + line(18, '"startLine": '), _Sql("CAST(f.line AS VARCHAR)"), line(16, "}")
        )
        + " ELSE '' END"
    )
    logical = _Sql(
        "CASE WHEN coalesce(f.result_key, '') <> '' THEN "
        + _concat(
            "," + line(14, '"logicalLocations": [') + line(16, "{") + line(18, '"fullyQualifiedName": '),
            _Sql("json_text(f.result_key)"),
            "," + line(18, '"kind": "object"') + line(16, "}") + line(14, "]"),
        )
        + " ELSE '' END"
    )
    location = _Sql(
        "CASE WHEN d.artifact IS NULL THEN '' ELSE "
        + _concat(
            ","
            + line(10, '"locations": [')
            + line(12, "{")
            + line(14, '"physicalLocation": {')
            + line(16, '"artifactLocation": '),
            _Sql("d.artifact"),
            region,
            line(14, "}"),
            logical,
            line(12, "}") + line(10, "]"),
        )
        + " END"
    )
    return _concat(
        "{" + line(10, '"ruleId": '),
        _Sql("json_text(f.rule)"),
        "," + line(10, '"ruleIndex": '),
        _Sql(f"CAST(list_position({rule_ids}, f.rule) - 1 AS VARCHAR)"),
        "," + line(10, '"level": '),
        _Sql("json_text(f.severity)"),
        "," + line(10, '"message": {') + line(12, '"text": '),
        _Sql(f"json_text({message})"),
        line(10, "},") + line(10, '"partialFingerprints": {') + line(12, '"archiverFinding/v1": "'),
        _Sql(f"left(sha256({identity}), 32)"),
        '"' + line(10, "},") + line(10, '"properties": {'),
        properties,
        line(10, "}"),
        location,
        line(8, "}"),
    )
