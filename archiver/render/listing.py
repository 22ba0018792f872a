"""What a command prints, as every renderer takes it: items of one kind, in order, and what surrounds them."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

Chunks = Iterator[tuple[int, memoryview | bytes]]
"""JSON text of items, as (how many items, their text) chunks."""


@dataclass
class Listing:
    """Rows of a query, an audit's findings or verify's verdicts, read lazily as they are rendered."""

    fields: tuple[str, ...]
    rows: Iterable[dict]
    """The items as dicts of machine-ready values, in order (for the table, CSV, SARIF and, without
    `spelled`, JSON)."""
    table_fields: tuple[str, ...] = ()
    """The columns of the table, when it shows fewer than `fields` (default: all)."""
    spelled: Callable[[str, int | None], Chunks] | None = None
    """The items as JSON text made by DuckDB, each after the separator, indented as at `depth` (compact
    for None): the only JSON of a listing that has it. None: orjson spells `rows`."""
    name: str | None = None
    """What the items are ("findings", "verdicts"): JSON then wraps them as {name: [...], "summary": ...}
    indented; without a name, JSON is a bare array of compact rows."""
    summary: dict | None = None
    record: Callable[[dict], str] | None = None
    """The table's text of one item (its lines); None: aligned columns."""
    footer: Callable[[], str] | None = None
    """The table's text after the items (None: the row count under aligned columns)."""
    rules: tuple[Any, ...] = ()
    """The rules findings were checked against (SARIF's `tool.driver.rules`)."""

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)


@contextmanager
def as_text(out: BinaryIO) -> Iterator[TextIO]:
    """`out` as UTF-8 text for the renderers that write text, left open and flushed."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    try:
        yield text
    finally:
        text.flush()
        text.detach()
