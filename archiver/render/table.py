"""A listing as a table for people: aligned columns sized from the first rows, or each item's own lines."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain, islice
from typing import IO, Any, BinaryIO

from ..query.listing import Listing, as_text
from .cells import cell_text
from .fitting import aligned, column, cut, record_lines, row_lines, shown, terminal_width, widths, wrapped
from .paths import shown_field
from .terminal import painted, printable, wants_colour

TABLE_SAMPLE = 200  # rows read ahead to size the table's columns


def write(listing: Listing, out: BinaryIO, width: int | None = None, headers: bool = True) -> int:
    """The listing's heading, its items, then its footer; aligned columns where the listing gives no `record`
    of its own. On a terminal (or given `width`) everything fits its width by the one rule of `fitting`;
    elsewhere no value is cut. Without `headers`, only the rows: no field names, no row count."""
    width = width or terminal_width(out)
    colour = wants_colour(out)
    with as_text(out) as text:
        if listing.heading is not None:
            text.write(wrapped(printable(listing.heading()), width))
        if listing.record is None:
            fields = list(listing.table_fields or listing.fields)
            count, empty = _columns(listing, fields, text, width, headers, colour)
        else:
            count, empty = 0, []
            for row in listing.rows:
                record = wrapped(printable(listing.record(row)), width, body_indent=True)
                text.write(_toned_record(record, row) if colour else record)
                count += 1
        if listing.footer is not None:
            text.write(wrapped(printable(listing.footer()), width))
        elif listing.record is None and headers:
            left_out = f"; empty, not shown: {', '.join(empty)}" if empty else ""
            text.write(f"({count} row{'' if count == 1 else 's'}{left_out})\n")
    return count


def _toned_record(record: str, row: dict) -> str:
    """A record with its first line in the tone of the row's status, severity or verdict."""
    said = next((str(row[f]) for f in TONED_FIELDS if row.get(f) is not None), "")
    first, newline, rest = record.partition("\n")
    return painted(first, tone_of(said)) + newline + rest


def _columns(
    rows: Iterable[dict], fields: list[str], out: IO[str], width: int | None, headers: bool, colour: bool = False
) -> tuple[int, list[str]]:
    """The rows as aligned columns (fitted to `width`: `fitting`); how many, and the columns left out."""
    rows = iter(rows)
    head = list(islice(rows, TABLE_SAMPLE))
    cells = [[_cell(shown_field(r, f)) for f in fields] for r in head]
    columns = [column(f, [row[at] for row in cells], [r.get(f) for r in head], headers) for at, f in enumerate(fields)]
    kept = shown(columns, cells) if width is not None else [True] * len(fields)
    columns = [c for c, keep in zip(columns, kept, strict=True) if keep]
    fitted = [c.width for c in columns] if width is None else widths(columns, width)
    names = [c.name for c in columns]
    toned = [colour and c.name in TONED_FIELDS for c in columns]
    paint = (lambda at, text: painted(text, tone_of(text)) if toned[at] else text) if any(toned) else None
    if headers and fitted is not None:
        out.write("  ".join(cut(c.name, w).ljust(w) for c, w in zip(columns, fitted, strict=True)).rstrip() + "\n")
        out.write("  ".join("-" * w for w in fitted) + "\n")
    count = 0
    for row in chain(head, rows):
        shown_cells = [_cell(shown_field(row, c.name)) for c in columns]
        if fitted is None:  # a row at a time, a blank line between two
            lines = ([""] if count else []) + record_lines(names, shown_cells, width, paint)
        elif width is None:
            lines = [aligned(shown_cells, columns, fitted, paint)]
        else:
            lines = row_lines(shown_cells, columns, fitted, paint)
        out.write("\n".join(lines) + "\n")
        count += 1
    return count, [f for f, keep in zip(fields, kept, strict=True) if not keep]


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
