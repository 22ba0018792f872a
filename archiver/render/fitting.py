"""The one fitting rule for text on a terminal: tables shrunk to its width, lines wrapped at its edge.

A table fits by, in this order: leaving out the columns empty in every row; keeping numbers, the
status (status, severity, verdict: what is wrong) and what identifies a row (a task or message id, a
claim's pointer) whole; shrinking the widest of the other columns
first, none below `MIN_WIDTH` (a path is cut from the left and keeps its file name); and wrapping the
last column, when it is prose, beneath itself. A table that does not fit so is shown a row at a time,
each field on a line of its own. A line of text wraps at the widest gaps first (the two spaces between
the items of a summary), then at spaces, then after a path's `/`: never inside a number or a word.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIN_WIDTH = 10
"""The narrowest a shrunk column gets (a path's: its longest file name after `…/`)."""
GAP = 2
"""Spaces between two columns."""
WHOLE_FIELDS = frozenset({"status", "severity", "verdict", "task_id", "message_id", "context_id", "pointer"})
"""The columns never cut, besides numbers: what is wrong, and what identifies the row (`task-vrs-compat-f…`
could be two tasks). A table that cannot show them whole is shown a row at a time."""


@dataclass(frozen=True)
class Column:
    """A table's column as the fitting rule sees it, from its name and (a sample of) its cells."""

    name: str
    width: int
    """Its widest cell, or its name."""
    least: int
    """The narrowest it may be shrunk to (its width when it is kept whole)."""
    numeric: bool
    prose: bool
    """Whether a cell holds a space: the last column then wraps rather than being cut."""


def column(name: str, cells: list[str], values: list[Any], headers: bool = True) -> Column:
    """The column `name` holding `cells` (as shown) of `values` (as stored)."""
    width = max([len(name) * headers] + [len(c) for c in cells])
    numeric = bool(values) and all(_is_number(v) for v in values if v is not None)
    if numeric or name in WHOLE_FIELDS:
        return Column(name, width, width, numeric, False)
    names = [len(_file_name(c)) + 2 for c in cells if is_path(c)]
    return Column(name, width, min(width, max([MIN_WIDTH, *names])), False, any(" " in c for c in cells))


def shown(columns: list[Column], cells: list[list[str]]) -> list[bool]:
    """Which columns a terminal shows: those with a value in some row (all of them when no row has one)."""
    kept = [any(row[at] for row in cells) for at in range(len(columns))]
    return kept if any(kept) else [True] * len(columns)


def widths(columns: list[Column], total: int) -> list[int] | None:
    """Each column's width in a line of at most `total`, the widest shrunk first; None when even at their
    least they do not fit (the rows are then shown one at a time: `record_lines`)."""
    natural = [c.width for c in columns]
    if _line_width(natural) <= total:
        return natural
    least = [c.least if at < len(columns) - 1 or not c.prose else min(c.width, 2 * MIN_WIDTH)
             for at, c in enumerate(columns)]  # fmt: skip
    if _line_width(least) > total:
        return None
    low, high = 0, max(natural)
    while low < high:  # the widest level every column may keep that still fits
        level = (low + high + 1) // 2
        if _line_width(_levelled(columns, least, level)) <= total:
            low = level
        else:
            high = level - 1
    fitted = _levelled(columns, least, low)
    spare = total - _line_width(fitted)
    for at in sorted(range(len(columns)), key=lambda at: -natural[at]):  # what is left to the widest
        grown = min(natural[at] - fitted[at], spare)
        fitted[at] += grown
        spare -= grown
    return fitted


def _levelled(columns: list[Column], least: list[int], level: int) -> list[int]:
    return [max(low, min(c.width, level)) for c, low in zip(columns, least, strict=True)]


def _line_width(widths: list[int]) -> int:
    return sum(widths) + GAP * (len(widths) - 1)


Paint = Callable[[int, str], str]
"""What colours the cell of the column at an index (its text as shown, before padding)."""


def row_lines(cells: list[str], columns: list[Column], fitted: list[int], paint: Paint | None = None) -> list[str]:
    """A row's lines: each cell cut to its width (a path from the left), the last, prose, wrapped."""
    last = len(cells) - 1
    parts = [cut(cell, width) for cell, width in zip(cells[:last], fitted, strict=False)]
    tail = wrap(cells[last], fitted[last]) if columns[last].prose else [cut(cells[last], fitted[last])]
    indent = sum(fitted[:last]) + GAP * last
    first = aligned([*parts, tail[0]], columns, fitted, paint)
    return [first] + [(" " * indent + line).rstrip() for line in tail[1:]]


def aligned(cells: list[str], columns: list[Column], fitted: list[int], paint: Paint | None = None) -> str:
    """Cells padded to their widths (numbers to the right), two spaces apart."""
    parts = []
    for at, (cell, column, width) in enumerate(zip(cells, columns, fitted, strict=True)):
        padding = " " * (width - len(cell))
        text = paint(at, cell) if paint else cell
        parts.append(padding + text if column.numeric else text + padding)
    return "  ".join(parts).rstrip()


def record_lines(names: list[str], cells: list[str], total: int, paint: Paint | None = None) -> list[str]:
    """A row as a block: a field a line, its name, then its value wrapped beneath itself."""
    pad = max(len(name) for name in names) + GAP
    lines = []
    for at, (name, cell) in enumerate(zip(names, cells, strict=True)):
        first, *more = wrap(cell, max(total - pad, MIN_WIDTH))
        shown = paint(at, first) if paint and first else first
        lines += [(name.ljust(pad) + shown).rstrip(), *(" " * pad + line for line in more)]
    return lines


def cut(cell: str, width: int) -> str:
    """`cell` in at most `width` characters: a path cut from the left, other text from the right."""
    if len(cell) <= width:
        return cell
    if is_path(cell):
        tail = cell[len(cell) - width + 1 :]
        at = tail.find("/")
        return "…" + (tail[at:] if 0 <= at < len(tail) - len(_file_name(cell)) else tail)
    return cell[: width - 1] + "…"


def is_path(cell: str) -> bool:
    """A cell holding a path or address (a `/` and no space): its end says most."""
    return "/" in cell.strip("/") and " " not in cell


def _file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


_ITEMS = re.compile(r"(?<=\S)( {2,})(?=\S)")


def wrap(line: str, width: int | None, indent: str = "") -> list[str]:
    """`line` in lines of at most `width` (None: as it is), each after the first beginning with `indent`:
    broken between its items (two spaces or more apart) where they fit, else between words, else after a `/`."""
    if width is None or len(line) <= width:
        return [line]
    lines = [_lead(line)]
    pieces = _ITEMS.split(line.strip())
    for item, gap in zip(pieces[::2], [*pieces[1::2], ""], strict=True):
        joined = lines[-1] + item
        if len(joined) <= width:
            lines[-1] = joined
        elif lines[-1].strip() and len(indent + item) <= width:
            lines[-1] = lines[-1].rstrip()
            lines.append(indent + item)
        else:
            _words(item, width, indent, lines)
        lines[-1] += gap
    return [text.rstrip() for text in lines]


def _words(item: str, width: int, indent: str, lines: list[str]) -> None:
    for word in item.split(" "):
        for at, piece in enumerate(_pieces(word, width - len(indent))):
            joined = lines[-1] + (" " if lines[-1].strip() and not at and lines[-1][-1] != " " else "") + piece
            if len(joined) <= width or not lines[-1].strip():
                lines[-1] = joined
            else:
                lines.append(indent + piece)


def _pieces(word: str, room: int) -> list[str]:
    """A word too long for a line in pieces that fit, each ending after a `/` where it can."""
    pieces = []
    while len(word) > room > 0:
        at = word.rfind("/", 0, room) + 1 or room
        pieces.append(word[:at])
        word = word[at:]
    return [*pieces, word]


def wrapped(text: str, width: int | None, body_indent: bool = False) -> str:
    """Every line of `text` wrapped to `width`, its continuation lines indented two spaces past its own (with
    `body_indent`, a line that has none continues as indented as the next line that has some: a record's
    first line under its body)."""
    if width is None:
        return text
    lines = text.split("\n")
    body = next((_lead(line) for line in lines if _lead(line)), "") if body_indent else ""
    out = []
    for line in lines:
        lead = _lead(line)
        out += wrap(line, width, lead + "  " if lead or not body else body)
    return "\n".join(out)


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def terminal_width(out: Any) -> int | None:
    """The width of the terminal `out` writes to (`COLUMNS` first); None when it is not a terminal."""
    isatty = getattr(out, "isatty", None)
    return shutil.get_terminal_size((80, 24)).columns if isatty and isatty() else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
