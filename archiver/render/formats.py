"""The output formats, named once: what `--format` offers and the renderer that writes each.

Every renderer takes a `Listing` (query rows, audit findings or verify verdicts) and a binary stream,
and returns how many items it wrote; those of `HEADED` also take `headers` (False: no line of field
names). Adding a format: one module with its `write`, and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from ..query.listing import Listing
from . import delimited, jsontext, markdown, sarif, table, tsv

Renderer = Callable[[Listing, BinaryIO], int]

RENDERERS: dict[str, tuple[Renderer, frozenset[str]]] = {
    # format: (renderer, what it renders: "rows" of a query, audit "findings", verify "verdicts")
    "table": (table.write, frozenset({"rows", "findings", "verdicts"})),
    "json": (jsontext.write_json, frozenset({"rows", "findings", "verdicts"})),
    "jsonl": (jsontext.write_jsonl, frozenset({"rows", "findings", "verdicts"})),
    "csv": (delimited.write, frozenset({"rows", "findings", "verdicts"})),
    "tsv": (tsv.write, frozenset({"rows", "findings", "verdicts"})),
    "markdown": (markdown.write, frozenset({"rows", "findings", "verdicts"})),
    "sarif": (sarif.write, frozenset({"findings"})),
}


MEDIA_TYPES = {
    "table": "text/plain; charset=utf-8",
    "json": "application/json",
    "jsonl": "application/jsonl",
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "sarif": "application/sarif+json",
}
"""What each format's bytes are, as a web download names them."""


def formats_for(kind: str) -> tuple[str, ...]:
    """The formats a listing of `kind` ("rows", "findings" or "verdicts") can be written in."""
    return tuple(name for name, (_, kinds) in RENDERERS.items() if kind in kinds)


HEADED = frozenset({"table", "csv", "tsv", "markdown"})
"""The formats that write a line of field names, which `headers=False` leaves out."""

OUTPUT_FORMATS = formats_for("rows")
AUDIT_FORMATS = formats_for("findings")
VERIFY_FORMATS = formats_for("verdicts")


def write(listing: Listing, fmt: str, out: BinaryIO, headers: bool = True) -> int:
    """Write `listing` to `out` in `fmt` (without its line of field names when not `headers` and `fmt` has
    one); how many items were written."""
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(RENDERERS)}")
    if not headers and fmt in HEADED:
        return renderer[0](listing, out, headers=False)
    return renderer[0](listing, out)
