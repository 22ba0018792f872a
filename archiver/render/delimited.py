"""A listing as delimited text (CSV; TSV through `tsv`): a header of its fields, then a line per item."""

from __future__ import annotations

import csv
from typing import Any, BinaryIO

from ..query.listing import Listing, as_text
from .jsontext import dumps


def write(listing: Listing, out: BinaryIO, headers: bool = True, delimiter: str = ",") -> int:
    fields = listing.fields
    count = 0
    with as_text(out) as text:
        writer = csv.writer(text, delimiter=delimiter, lineterminator="\n")
        if headers:
            writer.writerow(fields)
        for row in listing.rows:
            writer.writerow([cell(row.get(f)) for f in fields])
            count += 1
    return count


def cell(value: Any) -> Any:
    """A value as a delimited cell: empty for None, JSON for a list or object."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return dumps(value).decode()
    return value
