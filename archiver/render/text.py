"""`archiver show` as plain text: each table as aligned columns, its citations in one block beneath it; on a
terminal, fitted to its width by the one rule of `fitting` (a table too wide is shown a row at a time)."""

from __future__ import annotations

from ..query.transcript import ResultView
from .fitting import aligned, column, cut, record_lines, row_lines, widths, wrap
from .layout import Field, Item, Line, Table, citation_status, header, runs, sections
from .paths import display_text
from .terminal import painted, printable

INDENT = "   "
Toned = tuple[str, str]
"""A line with the tone it is coloured in on a terminal (`terminal.TONES`)."""
_TONES = {"bad": "bad", "head-bad": "bad", "warning": "warning"}


def render_text(results: list[ResultView], colour: bool = False, width: int | None = None) -> str:
    """The results as text, fitted to `width` columns (None: nothing cut or wrapped); with `colour`, what is
    wrong in red, warnings in yellow, what reproduced in green."""
    return "\n\n".join("\n".join(_written(line, colour, width) for line in _result(r, width)) for r in results) + "\n"


def _written(line: str | Toned, colour: bool, width: int | None) -> str:
    text, tone = line if isinstance(line, tuple) else (line, "")
    lead = text[: len(text) - len(text.lstrip())]
    lines = wrap(printable(text), width, lead + "  ")
    return "\n".join(painted(piece, tone) if colour else piece for piece in lines)


def _result(result: ResultView, width: int | None = None) -> list[str | Toned]:
    title, *where = header(result)
    lines = [f"══ {title}", *(INDENT + line for line in where)]
    lines += [(f"{INDENT}⚠ {display_text(gap)}", "warning") for gap in result.copy_gaps]
    for section in sections(result):
        lines.append(f"── {section.title}")
        for item in section.items:
            lines += _item(item, width)
    return lines


def _item(item: Item, width: int | None) -> list[str | Toned]:
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
        lines += _table(run, width) if isinstance(run, Table) else _fields(run)
    for cited in item.cited:
        lines += _citation(cited)
    return lines


def _table(table: Table, width: int | None) -> list[str]:
    """The table's rows as aligned columns fitted to `width` less the indent, else a row at a time."""
    grid = [[row[c].text if c in row else "" for c in table.columns] for row in table.rows]
    values = [[_value(row.get(c)) for c in table.columns] for row in table.rows]
    columns = [
        column(name, [cells[at] for cells in grid], [held[at] for held in values])
        for at, name in enumerate(table.columns)
    ]
    fitted = [c.width for c in columns] if width is None else widths(columns, width - len(INDENT))
    head = [f"{INDENT}{table.name}:"] if table.name else []
    if fitted is None:
        body: list[str] = []
        for at, cells in enumerate(grid):
            body += ([""] if at else []) + record_lines(table.columns, cells, width - len(INDENT))
    else:
        body = [aligned([cut(c.name, w) for c, w in zip(columns, fitted, strict=True)], columns, fitted)]
        for cells in grid:
            body += [aligned(cells, columns, fitted)] if width is None else row_lines(cells, columns, fitted)
    return head + [(INDENT + line).rstrip() for line in body]


def _value(cell) -> float | str | None:
    """What a cell holds, for the fitting rule to tell numbers (kept whole, to the right) from text."""
    if cell is None:
        return None
    return float(cell.text) if cell.is_number else cell.text


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
