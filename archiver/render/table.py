"""A listing as a table for people: aligned columns sized from the first rows, or each item's own lines."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from itertools import chain, islice
from typing import IO, Any, BinaryIO

from .listing import Listing, as_text
from .terminal import printable

TABLE_SAMPLE = 200  # rows read ahead to size the table's columns
MIN_WIDTH = 6


def write(listing: Listing, out: BinaryIO, width: int | None = None, headers: bool = True) -> int:
    """The items, then the listing's footer; aligned columns where the listing gives no `record` of its
    own, shrunk to `width` (default: the terminal's when `out` is one; elsewhere no value is cut). Without
    `headers`, only the rows: no field names, no row count."""
    width = width or terminal_width(out)
    with as_text(out) as text:
        if listing.record is None:
            count = _columns(listing, list(listing.table_fields or listing.fields), text, width, headers)
        else:
            count = 0
            for row in listing.rows:
                text.write(printable(listing.record(row)))
                count += 1
        if listing.footer is not None:
            text.write(printable(listing.footer()))
        elif listing.record is None and headers:
            text.write(f"({count} row{'' if count == 1 else 's'})\n")
    return count


def terminal_width(out: Any) -> int | None:
    """The width of the terminal `out` writes to (`COLUMNS` first); None when it is not a terminal."""
    isatty = getattr(out, "isatty", None)
    return shutil.get_terminal_size((80, 24)).columns if isatty and isatty() else None


def _columns(rows: Iterable[dict], fields: list[str], out: IO[str], width: int | None, headers: bool) -> int:
    rows = iter(rows)
    head = list(islice(rows, TABLE_SAMPLE))
    widths = [max([len(f) * headers] + [len(_cell(r.get(f))) for r in head]) for f in fields]
    if width is not None:
        _fit(widths, width)
    numeric = [bool(head) and all(_is_number(r.get(f)) for r in head if r.get(f) is not None) for f in fields]
    if headers:
        out.write(_line(fields, widths, [False] * len(fields)) + "\n")
        out.write("  ".join("-" * w for w in widths) + "\n")
    count = 0
    cut = width is not None
    for row in chain(head, rows):
        out.write(_line([_cell(row.get(f)) for f in fields], widths, numeric, cut) + "\n")
        count += 1
    return count


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fit(widths: list[int], total: int) -> None:
    while sum(widths) + 2 * (len(widths) - 1) > total:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= MIN_WIDTH:
            return
        widths[widest] -= 1


def _line(cells: list[str], widths: list[int], numeric: list[bool], cut: bool = True) -> str:
    parts = []
    for cell, width, right in zip(cells, widths, numeric, strict=False):
        cell = cell if len(cell) <= width or not cut else cell[: width - 1] + "…"
        parts.append(cell.rjust(width) if right else cell.ljust(width))
    return "  ".join(parts).rstrip()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "; ".join(map(str, value))
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return printable(" ".join(str(value).split()))
