"""`archiver show` as plain text: each table as aligned columns, its citations in one block beneath it."""

from __future__ import annotations

from ..query.transcript import ResultView
from .layout import Field, Item, Line, Table, citation_status, header, runs, sections
from .paths import display_text
from .terminal import painted, printable

INDENT = "   "
Toned = tuple[str, str]
"""A line with the tone it is coloured in on a terminal (`terminal.TONES`)."""
_TONES = {"bad": "bad", "head-bad": "bad", "warning": "warning"}


def render_text(results: list[ResultView], colour: bool = False) -> str:
    """The results as text; with `colour`, what is wrong in red, warnings in yellow, what reproduced in green."""
    return "\n\n".join("\n".join(_written(line, colour) for line in _result(r)) for r in results) + "\n"


def _written(line: str | Toned, colour: bool) -> str:
    text, tone = line if isinstance(line, tuple) else (line, "")
    return painted(printable(text), tone) if colour else printable(text)


def _result(result: ResultView) -> list[str | Toned]:
    title, *where = header(result)
    lines = [f"══ {title}", *(INDENT + line for line in where)]
    lines += [(f"{INDENT}⚠ {display_text(gap)}", "warning") for gap in result.copy_gaps]
    for section in sections(result):
        lines.append(f"── {section.title}")
        for item in section.items:
            lines += _item(item)
    return lines


def _item(item: Item) -> list[str | Toned]:
    if item.kind == "text":
        return [INDENT + line for line in item.text.splitlines() or [""]]
    if item.kind == "citation":
        if item.citation is None:
            return [f"{INDENT}[citation Part]"]
        c = item.citation
        line = f"{INDENT}[{citation_status(c)} Part: {c.study or '?'} · {c.period or '?'}]"
        return [(line, "bad" if not c.valid or c.inferred else "")]
    if item.kind != "data":
        return [f"{INDENT}[{item.text}]"]
    lines = []
    for run in runs(item.blocks):
        lines += _table(run) if isinstance(run, Table) else _fields(run)
    for cited in item.cited:
        lines += _citation(cited)
    return lines


def _table(table: Table) -> list[str]:
    grid = [table.columns] + [[row[c].text if c in row else "" for c in table.columns] for row in table.rows]
    numeric = [all(c not in row or row[c].is_number for row in table.rows) for c in table.columns]
    widths = [max(len(line[i]) for line in grid) for i in range(len(table.columns))]
    lines = [f"{INDENT}{table.name}:"] if table.name else []
    for line in grid:
        cells = (v.rjust(w) if right else v.ljust(w) for v, w, right in zip(line, widths, numeric, strict=True))
        lines.append((INDENT + "  ".join(cells)).rstrip())
    return lines


def _fields(fields: list[Field]) -> list[str]:
    if not fields:
        return []
    name_width = max(len(f.name) for f in fields)
    value_width = max((len(f.cell.text) for f in fields if f.cell.is_number), default=0)
    return [
        f"{INDENT}{f.name.ljust(name_width)}  {f.cell.text.rjust(value_width) if f.cell.is_number else f.cell.text}"
        for f in fields
    ]


def _citation(lines: list[Line]) -> list[Toned]:
    head, *rest = lines
    return [(f"{INDENT}↳ {head.text}", _tone(head)), *((f"{INDENT}  {line.text}", _tone(line)) for line in rest)]


def _tone(line: Line) -> str:
    if line.style == "verdict":
        return "good" if line.text.startswith("re-run: reproduced") else ""
    return _TONES.get(line.style, "")
