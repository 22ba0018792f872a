"""The reading order of a result, shared by the text and HTML renderers.

Messages from the user first, then the artifacts, then the agent's messages;
inside a data Part every scalar leaf in document order, and under each number
of an agent's quantitative Part the citations it rests on (or that it has none).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..cite.claims import entries, escape_token
from ..query.transcript import CitationView, PartView, ResultView


@dataclass
class Leaf:
    pointer: str
    literal: str
    is_claim: bool
    citations: list[CitationView] = field(default_factory=list)


@dataclass
class Item:
    kind: str  # text | data | citation | file | other
    text: str = ""
    leaves: list[Leaf] = field(default_factory=list)
    citation: CitationView | None = None


@dataclass
class Section:
    title: str
    items: list[Item]


def sections(result: ResultView) -> list[Section]:
    groups: dict[tuple[int, str], list[PartView]] = {}
    for part in result.parts:
        rank = 1 if part.location == "artifact" else 0 if part.role == "user" else 2
        groups.setdefault((rank, part.group), []).append(part)
    by_hash = {c.citation_hash: c for c in result.citations}
    out = []
    for (_rank, group), parts in sorted(groups.items(), key=lambda item: item[0][0]):
        first = parts[0]
        if first.location == "artifact":
            title = f"artifact {first.group_name or group or '(unnamed)'}"
        else:
            title = f"message from {first.role}" + (f" ({group})" if group else "")
        items = [_item(part, result, by_hash) for part in sorted(parts, key=lambda p: p.part_index)]
        out.append(Section(title, items))
    return out


def _item(part: PartView, result: ResultView, by_hash: dict[str, CitationView]) -> Item:
    if part.is_citation:
        return Item("citation", citation=by_hash.get(part.citation_hash))
    if part.kind == "text":
        return Item("text", text=part.text or "")
    if part.kind == "data":
        claims = part.role == "agent"
        return Item(
            "data",
            leaves=[
                Leaf(pointer, literal, is_number and claims, result.citations if is_number and claims else [])
                for pointer, literal, is_number in scalar_leaves(part.data)
            ],
        )
    if part.kind in ("file", "url", "raw"):
        return Item("file", text=f"{part.kind} {part.media_type or ''} {literal_of(part.file)}".strip())
    return Item("other", text=f"{part.kind} part")


def scalar_leaves(data: Any) -> Iterator[tuple[str, str, bool]]:
    """(JSON Pointer, JSON literal, is a number) for every scalar, in document order.

    A stack of open containers stands in for recursion: a Part may nest as deep as ingest stores it.
    """
    if not isinstance(data, (dict, list)):
        yield "", literal_of(data), _is_number(data)
        return
    stack = [("", entries(data))]
    while stack:
        pointer, open_entries = stack[-1]
        for key, value in open_entries:
            inner = f"{pointer}/{escape_token(str(key))}"
            if isinstance(value, (dict, list)):
                stack.append((inner, entries(value)))
                break
            yield inner, literal_of(value), _is_number(value)
        else:
            stack.pop()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def literal_of(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def citation_status(citation: CitationView) -> str:
    """ "citation", "INVALID citation", "TYPE-LOST citation" or both marks."""
    marks = []
    if not citation.valid:
        marks.append("INVALID")
    if citation.inferred:
        marks.append("TYPE-LOST")
    return " ".join([*marks, "citation"])


def n_text(n: float | None) -> str:
    if n is None:
        return "?"
    return str(int(n)) if float(n).is_integer() else repr(n)


def source_text(citation: CitationView) -> str:
    return f"{citation.source_function or '?'}({citation.source_table or '?'}, {citation.source_column or '?'})"


def header(result: ResultView) -> list[str]:
    what = f"task {result.task_id}" if result.kind == "task" else f"message {result.message_id}"
    line = " · ".join(
        x
        for x in (
            what,
            result.state,
            str(result.timestamp) if result.timestamp else None,
            f"agent {result.agent}" if result.agent else None,
        )
        if x
    )
    copies = len(result.source_paths)
    stored = f"stored in {copies} copies" if copies > 1 else "stored in"
    return [line, f"context {result.context_id or '-'} · {stored}: {', '.join(result.source_paths)}"]


def verdict_text(citation: CitationView, pointer: str | None) -> str | None:
    """The claim's re-run verdict (`archiver verify`) under this citation, or None if never verified."""
    if citation.verdict is None:
        return None
    when = f" (verified {citation.verified_at:%Y-%m-%d %H:%M})" if citation.verified_at else ""
    rows = f", over {citation.rows_used}" if citation.rows_used else ""
    if citation.verdict == "not-rerunnable":
        return f"NOT RE-RUNNABLE: {citation.verdict_reason}{when}"
    if citation.verdict == "differs" and pointer in citation.differences:
        note = f" ({citation.notes[pointer]})" if pointer in citation.notes else ""
        return (
            f"RE-RUN DIFFERS: the data layer re-derives {literal_of(citation.differences[pointer])}{note}{rows}{when}"
        )
    if citation.verdict == "differs":
        return f"re-run: this number reproduced, others of this result differ{rows}{when}"
    return f"re-run: {citation.verdict}{rows}{when}"
