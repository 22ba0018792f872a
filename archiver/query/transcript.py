"""What `archiver show` displays, read from the archive: results, their parts, their citations.

A result stored in several copies is shown once, from its fullest copy (most
parts, then the latest) with the citations gathered from every copy, or as the
file asked for holds it; with a line for each copy that lacks a Part another holds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import orjson

from ..cite.citations import Citation
from ..errors import QueryError
from ..store import chunks
from .lineage import CITATION_FIELDS


@dataclass
class CitationView(Citation):
    """A citation as `show` displays it: what it says (`Citation`), with its latest verdict."""

    inferred: bool = False
    verdict: str | None = None  # the latest `archiver verify` verdict; None: never verified
    verdict_reason: str | None = None
    verified_at: datetime | None = None
    differences: dict[str, Any] = field(default_factory=dict)  # pointer -> re-derived value, where it differs
    notes: dict[str, str] = field(default_factory=dict)  # pointer -> why it differs ("scale: ..."), where known
    rows_used: str | None = None  # the rows the verdict was made over, e.g. "rows fielded ...: 4,210 of 4,250"


@dataclass
class PartView:
    kind: str  # text | data | file | url | raw | unknown
    role: str
    location: str  # artifact | message
    group: str  # the artifact id or message id the part belongs to
    group_name: str | None
    part_index: int
    media_type: str | None
    text: str | None = None
    data: Any = None
    file: Any = None
    is_citation: bool = False
    citation_hash: str | None = None
    literals: dict[str, str] = field(default_factory=dict)  # claim pointer -> the number as stored at ingest


@dataclass
class ResultView:
    result_key: str
    kind: str
    task_id: str | None
    context_id: str | None
    message_id: str | None
    state: str | None
    timestamp: datetime | None
    agent: str | None
    source_paths: list[str]
    parts: list[PartView]
    citations: list[CitationView]
    shown_path: str | None = None  # the file of the copy whose parts are shown
    one_copy: bool = False  # shown as one file holds it (`--copy`): its own parts and citations only
    copy_gaps: list[str] = field(default_factory=list)  # "copy in <file> lacks the citation Part (...)"
    origin_paths: list[str] = field(default_factory=list)  # the files (spool segments) holding the origin copy


class NotFoundError(QueryError):
    """No task, message or context of that id in the archive."""

    http_status = 404


_RESULTS = """
    SELECT DISTINCT result_key FROM results
    WHERE task_id = $id OR message_id = $id OR context_id = $id
       OR result_key IN (SELECT result_key FROM parts WHERE message_id = $id)
"""


def transcript(con: duckdb.DuckDBPyConnection, ident: str, copy: str | None = None) -> list[ResultView]:
    """Every result the id names: a task id, a message id or a context id, oldest first.

    `copy`: show each result as stored in this file (a path as given at ingest, absolute or relative to the
    working directory); results with no copy there are left out.
    """
    keys = [row[0] for row in con.execute(_RESULTS, {"id": ident}).fetchall()]
    if not keys:
        raise NotFoundError(f"{ident}: no task, message or context of this id in the archive")
    views = [view for view in (_result(con, key, copy) for key in keys) if view is not None]
    if not views:
        raise NotFoundError(f"{ident}: no stored copy in {copy}")
    return sorted(views, key=lambda v: (v.timestamp is None, v.timestamp or datetime.min, v.result_key))


def _result(con: duckdb.DuckDBPyConnection, key: str, copy: str | None) -> ResultView | None:
    copies = con.execute(
        """
        SELECT r.copy_id, r.kind, r.task_id, r.context_id, r.message_id, r.state, r.timestamp, a.agent,
               r.source_path, (SELECT count(*) FROM parts p WHERE p.copy_id = r.copy_id) AS n_parts, r.origin
        FROM results r JOIN result_agents a ON a.copy_id = r.copy_id
        WHERE r.result_key = ?
        ORDER BY n_parts DESC, r.timestamp DESC NULLS LAST, r.source_path""",
        [key],
    ).fetchall()
    chosen = [row for row in copies if copy is None or _same_file(row[8], copy)]
    if not chosen:
        return None
    copy_id, kind, task_id, context_id, message_id, state, timestamp, agent = chosen[0][:8]
    literals = _literals(con, copy_id)
    parts = [
        PartView(
            kind=row[0],
            role=row[1],
            location=row[2],
            group=row[3] or row[4] or "",
            group_name=row[5],
            part_index=row[6],
            media_type=row[7],
            text=_text(chunks.whole(con, row[8], row[14])),
            data=_json(chunks.whole(con, row[9], row[15])),
            file=_json(chunks.whole(con, row[10], row[16])),
            is_citation=row[11],
            citation_hash=row[12],
            literals=literals.get(row[13], {}),
        )
        for row in con.execute(
            """
            SELECT p.kind, p.role, p.location, p.artifact_id, p.message_id, p.artifact_name, p.part_index,
                   p.media_type, p.text, p.data, p.file, p.is_citation, c.citation_hash, p.part_id,
                   p.text_chunked, p.data_chunked, p.file_chunked
            FROM parts p LEFT JOIN citations c ON c.part_id = p.part_id
            WHERE p.copy_id = ? ORDER BY p.ordinal""",
            [copy_id],
        ).fetchall()
    ]
    columns = ", ".join(CITATION_FIELDS)
    held = "AND citation_hash IN (SELECT citation_hash FROM citations WHERE copy_id = $copy)" if copy else ""
    cursor = con.execute(
        f"SELECT citation_hash, {columns} FROM result_citations WHERE result_key = $key {held} "
        "ORDER BY study, period, source_column, citation_hash",
        {"key": key, "copy": copy_id} if copy else {"key": key},
    )
    names = [d[0] for d in cursor.description]
    citations = [  # `valid` is the Citation's: no problems
        CitationView(**{n: v for n, v in zip(names, row, strict=False) if v is not None and n != "valid"})
        for row in cursor.fetchall()
    ]
    _attach_verdicts(con, key, citations)
    return ResultView(
        key,
        kind,
        task_id,
        context_id,
        message_id,
        state,
        timestamp,
        agent,
        sorted({row[8] for row in copies}),
        parts,
        citations,
        chosen[0][8],
        copy is not None,
        copy_gaps(con, key) if len(copies) > 1 else [],
        sorted({row[8] for row in copies if row[10] is not None}),
    )


def _same_file(source_path: str, asked: str) -> bool:
    return source_path in (asked, os.path.abspath(asked))


def _literals(con: duckdb.DuckDBPyConnection, copy_id: str) -> dict[str, dict[str, str]]:
    """part_id -> {claim pointer: its number as ingest stored it}."""
    by_part: dict[str, dict[str, str]] = {}
    for part_id, pointer, literal in con.execute(
        "SELECT part_id, pointer, literal FROM claims WHERE copy_id = ?", [copy_id]
    ).fetchall():
        by_part.setdefault(part_id, {})[pointer] = literal
    return by_part


_GAPS = """
    WITH held AS (
        SELECT DISTINCT p.content_hash, p.is_citation, p.kind, p.part_index, p.location, p.role,
               coalesce(p.artifact_name, p.artifact_id) AS artifact
        FROM parts p WHERE p.result_key = $key AND p.kind <> 'unknown'
    )
    SELECT r.source_path, h.is_citation, h.kind, h.part_index, h.location, h.role, h.artifact
    FROM results r, held h
    WHERE r.result_key = $key AND r.origin IS NULL
      AND NOT EXISTS (SELECT 1 FROM parts q WHERE q.copy_id = r.copy_id AND q.content_hash = h.content_hash)
    ORDER BY r.source_path, NOT h.is_citation, h.location, h.part_index, h.role, h.artifact NULLS FIRST, h.kind
"""


def copy_gaps(con: duckdb.DuckDBPyConnection, key: str) -> list[str]:
    """One line per stored copy and Part it lacks that another copy of the result holds (compared by content).
    An origin copy is the agent's own words: what it lacks was not sent, or not recorded, so it is not listed."""
    lines = []
    for path, is_citation, kind, index, location, role, artifact in con.execute(_GAPS, {"key": key}).fetchall():
        what = "the citation Part" if is_citation else f"a {kind} Part"
        where = f'artifact "{artifact}"' if location == "artifact" else f"a message from {role}"
        line = f"copy in {path} lacks {what} (Part {index} of {where})"
        if line not in lines:
            lines.append(line)
    return lines


def _attach_verdicts(con: duckdb.DuckDBPyConnection, key: str, citations: list[CitationView]) -> None:
    by_hash = {c.citation_hash: c for c in citations}
    for citation_hash, verdict, reason, verified_at, differences, rows_used in con.execute(
        "SELECT citation_hash, verdict, reason, verified_at, differences, rows_used FROM latest_verdicts "
        "WHERE result_key = ?",
        [key],
    ).fetchall():
        if citation_hash in by_hash:
            c = by_hash[citation_hash]
            c.verdict, c.verdict_reason, c.verified_at, c.rows_used = verdict, reason, verified_at, rows_used
            found = _json(differences) or []
            c.differences = {d["pointer"]: d.get("rerun") for d in found}
            c.notes = {d["pointer"]: d["note"] for d in found if d.get("note", "").startswith("scale:")}


def _text(value: str | bytes | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _json(text: str | bytes | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # integers beyond 64 bits
        return json.loads(text)
