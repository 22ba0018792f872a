"""The reading order of a result, shared by the text and HTML renderers.

Messages from the user first, then the artifacts, then the agent's messages;
inside a data Part each array of objects as a table and every other scalar as a
named field, in document order, with the numbers as ingest stored them; beside an
agent's quantitative Part one block per citation it rests on (or that it has none),
saying which cells it covers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..cite.stated import as_written, is_number, literal_of, stated
from ..query.transcript import CitationView, PartView, ResultView
from .paths import display_path
from .terminal import counted


@dataclass
class Cell:
    pointer: str
    text: str  # as displayed: a string bare, a number as ingest stored it
    is_number: bool
    is_claim: bool
    label: str = ""  # how a reader finds a claim's cell ("share of 18-34", "total"); set by `cell_labels`


@dataclass
class Table:
    """An array of objects: one row per element, one column per scalar name (nested names joined by ".")."""

    name: str
    columns: list[str]
    rows: list[dict[str, Cell]]

    def row_name(self, index: int) -> str:
        """What a reader calls the row: its first text cell, else its number."""
        cells = self.rows[index].values()
        return next((c.text for c in cells if not c.is_number and not c.is_claim and c.text), f"row {index + 1}")


@dataclass
class Field:
    name: str
    cell: Cell


@dataclass
class Line:
    style: str  # head | head-bad | plain | warning | bad | verdict
    text: str


@dataclass
class Item:
    kind: str  # text | data | citation | file | other
    text: str = ""
    blocks: list[Table | Field] = field(default_factory=list)
    cited: list[list[Line]] = field(default_factory=list)  # one block per citation of a Part with claims
    citation: CitationView | None = None
    part_index: int | None = None  # the Part's index, for a link to it (an audit finding names it)


@dataclass
class Section:
    title: str
    items: list[Item]


UNCITED = "UNCITED: no citation in any stored copy of this result"
UNCITED_IN_COPY = "UNCITED: no citation in this copy of the result"


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
        items = []
        for part in sorted(parts, key=lambda p: p.part_index):
            item = _item(part, result, by_hash)
            item.part_index = part.part_index
            items.append(item)
        out.append(Section(title, items))
    return out


def _item(part: PartView, result: ResultView, by_hash: dict[str, CitationView]) -> Item:
    if part.is_citation:
        return Item("citation", citation=by_hash.get(part.citation_hash))
    if part.kind == "text":
        return Item("text", text=part.text or "")
    if part.kind == "data":
        found = blocks(part.data, part.literals, claims=part.role == "agent")
        labels = cell_labels(found)
        if not labels:
            return Item("data", blocks=found)
        cells = f"{counted(len(labels), 'number')}: {coverage(found)}"
        cited = [citation_lines(c, Line("plain", f"covers {cells}"), labels) for c in result.citations]
        uncited = UNCITED_IN_COPY if result.one_copy else UNCITED
        return Item("data", blocks=found, cited=cited or [[Line("bad", uncited), Line("plain", cells)]])
    if part.kind in ("file", "url", "raw"):
        return Item("file", text=f"{part.kind} {part.media_type or ''} {literal_of(part.file)}".strip())
    return Item("other", text=f"{part.kind} part")


def blocks(data: Any, literals: dict[str, str], claims: bool) -> list[Table | Field]:
    """A Part's data in document order: each array of objects a `Table`, every other scalar a `Field`.

    A stack of open containers stands in for recursion: a Part may nest as deep as ingest stores it.
    """
    if _is_table(data):
        return [_table("", "", data, literals, claims)]
    if not isinstance(data, (dict, list)) or not data:
        return [Field("(value)", _cell("", data, literals, claims))]
    out: list[Table | Field] = []
    stack = [("", entries(data))]
    while stack:
        pointer, open_entries = stack[-1]
        for key, value in open_entries:
            inner = f"{pointer}/{escape_token(str(key))}"
            if _is_table(value):
                out.append(_table(name_of(inner), inner, value, literals, claims))
            elif isinstance(value, (dict, list)) and value:
                stack.append((inner, entries(value)))
                break
            else:
                out.append(Field(name_of(inner), _cell(inner, value, literals, claims)))
        else:
            stack.pop()
    return out


def runs(found: list[Table | Field]) -> Iterator[Table | list[Field]]:
    """The blocks in document order, each run of consecutive fields together (one aligned list)."""
    fields: list[Field] = []
    for block in found:
        if isinstance(block, Field):
            fields.append(block)
            continue
        if fields:
            yield fields
            fields = []
        yield block
    if fields:
        yield fields


def _is_table(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(row, dict) and row for row in value)


def _table(name: str, pointer: str, rows: list[dict], literals: dict[str, str], claims: bool) -> Table:
    columns: dict[str, None] = {}
    cells = []
    for index, row in enumerate(rows):
        at = f"{pointer}/{index}"
        found = {name_of(inner): _cell(at + inner, value, literals, claims) for inner, value in scalar_leaves(row)}
        columns.update(dict.fromkeys(found))
        cells.append(found)
    return Table(name, list(columns), cells)


def _cell(pointer: str, value: Any, literals: dict[str, str], claims: bool) -> Cell:
    """A scalar as shown; a claim when it is a number, or a string stating one ("35%": `cite.stated`)."""
    number = is_number(value)
    if isinstance(value, str):
        return Cell(pointer, value, False, claims and stated(value) is not None)
    text = (literals.get(pointer) or literal_of(value)) if number else literal_of(value)
    return Cell(pointer, text, number, number and claims)


def escape_token(token: str) -> str:
    """A key as a JSON Pointer token (RFC 6901), as the core addresses the claims the layout marks."""
    return token.replace("~", "~0").replace("/", "~1")


def entries(container: dict | list) -> Iterator[tuple[Any, Any]]:
    """(key, value) of an object, (index, value) of an array."""
    return iter(container.items()) if type(container) is dict else enumerate(container)


def name_of(pointer: str) -> str:
    """A JSON Pointer as a reader names the value: its tokens joined by "."."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    return ".".join(tokens) or "(value)"


def scalar_leaves(data: Any) -> Iterator[tuple[str, Any]]:
    """(JSON Pointer, value) for every scalar, in document order."""
    if not isinstance(data, (dict, list)):
        yield "", data
        return
    stack = [("", entries(data))]
    while stack:
        pointer, open_entries = stack[-1]
        for key, value in open_entries:
            inner = f"{pointer}/{escape_token(str(key))}"
            if isinstance(value, (dict, list)) and value:
                stack.append((inner, entries(value)))
                break
            yield inner, value
        else:
            stack.pop()


def cell_labels(found: list[Table | Field]) -> dict[str, Cell]:
    """Claim pointer -> its cell, labelled as a reader finds it ("share of 18-34", "total")."""
    labels = {}
    for block in found:
        if isinstance(block, Field):
            if block.cell.is_claim:
                block.cell.label = block.name
                labels[block.cell.pointer] = block.cell
            continue
        for index, row in enumerate(block.rows):
            for column, cell in row.items():
                if cell.is_claim:
                    cell.label = f"{column} of {block.row_name(index)}"
                    labels[cell.pointer] = cell
    return labels


def coverage(found: list[Table | Field]) -> str:
    """Which cells a Part's citations cover: the numeric columns of each table, the numeric fields."""
    parts = []
    for block in runs(found):
        if not isinstance(block, Table):
            names = [f.name for f in block if f.cell.is_claim]
            parts += [", ".join(names)] if names else []
            continue
        columns = [c for c in block.columns if any(row.get(c) and row[c].is_claim for row in block.rows)]
        if columns:
            rows = f"{len(block.rows)} row" + ("s" if len(block.rows) != 1 else "")
            parts.append(f"{', '.join(columns)} in {block.name or 'the table'} ({rows})")
    return "; ".join(parts)


def citation_status(citation: CitationView) -> str:
    """ "citation", "INVALID citation", "TYPE-LOST citation" or both marks."""
    marks = []
    if not citation.valid:
        marks.append("INVALID")
    if citation.inferred:
        marks.append("TYPE-LOST")
    return " ".join([*marks, "citation"])


def citation_lines(c: CitationView, covers: Line, labels: dict[str, Cell]) -> list[Line]:
    """One citation's block beside the Part it supports: what it says, which cells, what is wrong with it."""
    bad = not c.valid or c.inferred
    head = f"{citation_status(c)}: {c.study or '?'} · {c.period or '?'}"
    lines = [
        Line("head-bad" if bad else "head", head),
        covers,
        *([Line("plain", f"fielded {c.fielded}")] if c.fielded else []),
        Line(
            "plain",
            f"base: {c.base_name or '?'} · n={n_text(c.base_n)}" + (f" · weight {c.weight}" if c.weight else ""),
        ),
        Line("plain", f"source: {source_text(c)}"),
        *(Line("warning", f"⚠ WARNING: {w}") for w in c.warnings),
    ]
    if c.inferred:
        lines.append(Line("bad", "TYPE-LOST: recognised by its fields; its media type was lost on the way"))
    lines += [Line("bad", f"INVALID: {p}") for p in c.problems]
    return lines + verdict_lines(c, labels)


def verdict_lines(c: CitationView, labels: dict[str, Cell]) -> list[Line]:
    """The latest `archiver verify` verdict on this Part's numbers; none if never verified."""
    if c.verdict is None:
        return []
    when = f" (verified {c.verified_at:%Y-%m-%d %H:%M})" if c.verified_at else ""
    rows = f", over {c.rows_used}" if c.rows_used else ""
    if c.verdict == "not-rerunnable":
        return [Line("bad", f"NOT RE-RUNNABLE: {c.verdict_reason}{when}")]
    if c.verdict in ("partial", "unscoped"):
        return [Line("warning", f"RE-RUN {c.verdict.upper()}{rows}{when}: {c.verdict_reason}")]
    differing = [(p, labels[p], c.differences[p]) for p in labels if p in c.differences]
    if c.verdict == "differs" and differing:
        return [Line("bad", f"RE-RUN DIFFERS{rows}{when}:")] + [
            Line(
                "bad",
                f"  {cell.label}: the agent wrote {cell.text}, the data layer re-derives {as_written(value, cell.text)}"
                + (f" ({c.notes[pointer]})" if pointer in c.notes else ""),
            )
            for pointer, cell, value in differing
        ]
    if c.verdict == "differs":
        return [Line("verdict", f"re-run: these numbers reproduced, others of this result differ{rows}{when}")]
    return [Line("verdict", f"re-run: {c.verdict}{rows}{when}")]


def n_text(n: float | None) -> str:
    if n is None:
        return "?"
    return str(int(n)) if float(n).is_integer() else repr(n)


def source_text(citation: CitationView) -> str:
    return f"{citation.source_function or '?'}({citation.source_table or '?'}, {citation.source_column or '?'})"


def header(result: ResultView, choosing: str = "--copy FILE shows one") -> list[str]:
    """The result's line, its agent and context, where it is stored and (for a result stored in several
    copies, each on a line of its own after the 3rd, in `source_paths`' order) which copy is shown and how
    to choose another (`choosing`): short lines, for an 80-column terminal."""
    what = f"task {result.task_id}" if result.kind == "task" else f"message {result.message_id}"
    when = str(result.timestamp) if result.timestamp else None
    line = " · ".join(x for x in (what, result.state, when) if x)
    who = " · ".join(
        x for x in (f"agent {result.agent}" if result.agent else None, f"context {result.context_id or '-'}") if x
    )
    paths = [display_path(p) for p in result.source_paths]
    origin = {display_path(p) for p in result.origin_paths}
    if len(paths) == 1:
        return [line, who, f"stored in: {paths[0]}" + (ORIGIN_MARK if origin else "")]
    shown = display_path(result.shown_path or "")
    return [
        line,
        who,
        f"stored in {len(paths)} copies ({choosing}):",
        *(
            f"  {path}" + (ORIGIN_MARK if path in origin else "") + (" (shown)" if path == shown else "")
            for path in paths
        ),
    ]


ORIGIN_MARK = " (origin copy: recorded at the agent)"
"""Beside a file holding (a segment of) the origin copy: what the agent itself sent, as `archiver record` saw it."""
