"""Query the index: lineage questions, read-only SQL, and rows streamed out in batches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class Rows:
    """Rows of one query as dicts, fetched from DuckDB in batches as they are iterated."""

    fields: tuple[str, ...]
    table_fields: tuple[str, ...]
    rows: Iterator[dict]
    json: Callable[[str], Iterator[tuple[int, memoryview | bytes]] | None] | None = None
    """For "json" and "jsonl": the same rows as JSON text made by DuckDB, as (rows, text) chunks;
    None where a column's type needs the Python path."""

    def __iter__(self) -> Iterator[dict]:
        return self.rows
