"""A listing as a Markdown table (GitHub's pipe tables): a header of its fields, a line per item, each
cell as CSV spells it, with `|` escaped, line breaks as `<br>` and other control characters as their
escapes (`printable`), so a report pastes into an issue or
a pull request as it is."""

from __future__ import annotations

from typing import BinaryIO

from ..query.listing import Listing, as_text
from .delimited import cell
from .paths import shown_field
from .terminal import printable


def write(listing: Listing, out: BinaryIO, headers: bool = True) -> int:
    fields = listing.fields
    count = 0
    with as_text(out) as text:
        if headers:
            text.write(_line(fields) + _line(["---"] * len(fields)))
        for row in listing.rows:
            text.write(_line([_text(cell(shown_field(row, field))) for field in fields]))
            count += 1
    return count


def _line(cells: list) -> str:
    return "| " + " | ".join(cells) + " |\n"


def _text(value) -> str:
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    return printable(text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>"))
