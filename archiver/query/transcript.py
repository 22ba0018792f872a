"""What `archiver show` displays, read from the archive: results, their parts, their citations.

A result stored in several copies is shown once, from its fullest copy (most
parts, then the latest), with the citations gathered from every copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import orjson

from ..cite.citations import Citation
from ..errors import QueryError
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


class NotFoundError(QueryError):
    """No task, message or context of that id in the archive."""


_RESULTS = """
    SELECT DISTINCT result_key FROM results
    WHERE task_id = $id OR message_id = $id OR context_id = $id
       OR result_key IN (SELECT result_key FROM parts WHERE message_id = $id)
"""


def transcript(con: duckdb.DuckDBPyConnection, ident: str) -> list[ResultView]:
    """Every result the id names: a task id, a message id or a context id, oldest first."""
    keys = [row[0] for row in con.execute(_RESULTS, {"id": ident}).fetchall()]
    if not keys:
        raise NotFoundError(f"{ident}: no task, message or context of this id in the archive")
    views = [_result(con, key) for key in keys]
    return sorted(views, key=lambda v: (v.timestamp is None, v.timestamp or datetime.min, v.result_key))


def _result(con: duckdb.DuckDBPyConnection, key: str) -> ResultView:
    copies = con.execute(
        """
        SELECT r.copy_id, r.kind, r.task_id, r.context_id, r.message_id, r.state, r.timestamp, a.agent,
               r.source_path, (SELECT count(*) FROM parts p WHERE p.copy_id = r.copy_id) AS n_parts
        FROM results r JOIN result_agents a ON a.copy_id = r.copy_id
        WHERE r.result_key = ?
        ORDER BY n_parts DESC, r.timestamp DESC NULLS LAST, r.source_path""",
        [key],
    ).fetchall()
    copy_id, kind, task_id, context_id, message_id, state, timestamp, agent = copies[0][:8]
    parts = [
        PartView(
            kind=row[0],
            role=row[1],
            location=row[2],
            group=row[3] or row[4] or "",
            group_name=row[5],
            part_index=row[6],
            media_type=row[7],
            text=row[8],
            data=_json(row[9]),
            file=_json(row[10]),
            is_citation=row[11],
            citation_hash=row[12],
        )
        for row in con.execute(
            """
            SELECT p.kind, p.role, p.location, p.artifact_id, p.message_id, p.artifact_name, p.part_index,
                   p.media_type, p.text, p.data, p.file, p.is_citation, c.citation_hash
            FROM parts p LEFT JOIN citations c ON c.part_id = p.part_id
            WHERE p.copy_id = ? ORDER BY p.ordinal""",
            [copy_id],
        ).fetchall()
    ]
    columns = ", ".join(CITATION_FIELDS)
    cursor = con.execute(
        f"SELECT citation_hash, {columns} FROM result_citations WHERE result_key = ? "
        "ORDER BY study, period, source_column, citation_hash",
        [key],
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
    )


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


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # integers beyond 64 bits
        return json.loads(text)
