"""A listing as a table for people: aligned columns sized from the first rows, or each item's own lines."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from itertools import chain, islice
from typing import IO, Any, BinaryIO

from ..query.listing import Listing, as_text
from .cells import cell_text
from .terminal import painted, printable, wants_colour

TABLE_SAMPLE = 200  # rows read ahead to size the table's columns
MIN_WIDTH = 6


def write(listing: Listing, out: BinaryIO, width: int | None = None, headers: bool = True) -> int:
    """The items, then the listing's footer; aligned columns where the listing gives no `record` of its
    own, shrunk to `width` (default: the terminal's when `out` is one; elsewhere no value is cut). Without
    `headers`, only the rows: no field names, no row count."""
    width = width or terminal_width(out)
    colour = wants_colour(out)
    with as_text(out) as text:
        if listing.record is None:
            fields = list(listing.table_fields or listing.fields)
            count = _columns(listing, fields, text, width, headers, colour)
        else:
            count = 0
            for row in listing.rows:
                text.write(
                    _toned_record(printable(listing.record(row)), row) if colour else printable(listing.record(row))
                )
                count += 1
        if listing.footer is not None:
            text.write(printable(listing.footer()))
        elif listing.record is None and headers:
            text.write(f"({count} row{'' if count == 1 else 's'})\n")
    return count


def _toned_record(record: str, row: dict) -> str:
    """A record with its first line in the tone of the row's status, severity or verdict."""
    said = next((str(row[f]) for f in TONED_FIELDS if row.get(f) is not None), "")
    first, newline, rest = record.partition("\n")
    return painted(first, tone_of(said)) + newline + rest


def terminal_width(out: Any) -> int | None:
    """The width of the terminal `out` writes to (`COLUMNS` first); None when it is not a terminal."""
    isatty = getattr(out, "isatty", None)
    return shutil.get_terminal_size((80, 24)).columns if isatty and isatty() else None


def _columns(
    rows: Iterable[dict], fields: list[str], out: IO[str], width: int | None, headers: bool, colour: bool = False
) -> int:
    rows = iter(rows)
    head = list(islice(rows, TABLE_SAMPLE))
    widths = [max([len(f) * headers] + [len(_cell(r.get(f))) for r in head]) for f in fields]
    if width is not None:
        _fit(widths, width, [f in TONED_FIELDS for f in fields])
    numeric = [bool(head) and all(_is_number(r.get(f)) for r in head if r.get(f) is not None) for f in fields]
    if headers:
        out.write(_line(fields, widths, [False] * len(fields)) + "\n")
        out.write("  ".join("-" * w for w in widths) + "\n")
    count = 0
    cut = width is not None
    toned = [colour and f in TONED_FIELDS for f in fields]
    for row in chain(head, rows):
        out.write(_line([_cell(row.get(f)) for f in fields], widths, numeric, cut, toned) + "\n")
        count += 1
    return count


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fit(widths: list[int], total: int, kept: list[bool]) -> None:
    """Narrow the widest columns until the line fits `total`; the `kept` ones (what is wrong) last."""
    while sum(widths) + 2 * (len(widths) - 1) > total:
        narrowed = [at for at in range(len(widths)) if not kept[at] and widths[at] > MIN_WIDTH]
        narrowed = narrowed or [at for at in range(len(widths)) if widths[at] > MIN_WIDTH]
        if not narrowed:
            return
        widths[max(narrowed, key=widths.__getitem__)] -= 1


def _line(
    cells: list[str], widths: list[int], numeric: list[bool], cut: bool = True, toned: list[bool] | None = None
) -> str:
    parts = []
    for at, (cell, width, right) in enumerate(zip(cells, widths, numeric, strict=False)):
        padding = " " * (width - len(shown_cell := cut_cell(cell, width, cut)))
        shown = painted(shown_cell, tone_of(cell)) if toned and toned[at] else shown_cell
        parts.append(padding + shown if right else shown + padding)
    return "  ".join(parts).rstrip()


def cut_cell(cell: str, width: int, cut: bool) -> str:
    return cell if len(cell) <= width or not cut else cell[: width - 1] + "…"


TONED_FIELDS = frozenset({"status", "severity", "verdict"})
"""The columns coloured on a terminal by what they say (`tone_of`)."""
_BAD = ("uncited", "invalid", "error", "differs", "not-rerunnable")
_WARNING = ("type lost", "warning", "partial", "unscoped", "stale")


def tone_of(said: str) -> str | None:
    """The tone of a status, severity or verdict: `bad` for what is wrong, `warning`, or `good` for a
    reproduced re-run."""
    if any(word in said for word in _BAD):
        return "bad"
    if any(word in said for word in _WARNING):
        return "warning"
    return "good" if "reproduced" in said else None


def _cell(value: Any) -> str:
    """A cell as the terminal shows it: on one line, its control characters written as escapes."""
    return printable(" ".join(cell_text(value).split()))
