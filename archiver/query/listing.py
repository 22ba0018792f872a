"""What a command prints, as every renderer takes it: items of one kind, in order, and what surrounds them."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from ..errors import QueryError

if TYPE_CHECKING:
    import pyarrow as pa

Chunks = Iterator[tuple[int, memoryview | bytes]]
"""JSON text of items, as (how many items, their text) chunks."""


class NoDataFrameLibraryError(QueryError):
    """`Listing.df` with neither pandas nor polars installed."""


@dataclass
class Listing:
    """Rows of a query, an audit's findings or verify's verdicts, read lazily as they are rendered.

    What the Python API returns for a question: iterate it as often as wanted (a query's rows are read
    again from the archive each time, so the archive must still be open), `len()` it, take its `first()`,
    or have it whole as an Arrow table (`arrow()`) or a data frame (`df()`). A listing made of a one-shot
    iterator (none the API makes) is read once and has no `len()`."""

    fields: tuple[str, ...]
    rows: Iterable[dict]
    """The items as dicts of machine-ready values, in order (for the table, CSV, SARIF and, without
    `spelled`, JSON): a query's `QueryRows` (re-run each time they are read), or a list."""
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
    heading: Callable[[], str] | None = None
    """The table's text before the items (an audit's summary)."""
    footer: Callable[[], str] | None = None
    """The table's text after the items (None: the row count under aligned columns)."""
    rules: tuple[Any, ...] = ()
    """The rules findings were checked against (SARIF's `tool.driver.rules`)."""

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    def __len__(self) -> int:
        """How many items; for a query, its `count(*)`, run now (a TypeError for a one-shot iterator)."""
        return len(self.rows)  # type: ignore[arg-type]

    def first(self) -> dict | None:
        """The first item, None when there is none."""
        return next(iter(self), None)

    def arrow(self) -> pa.Table:
        """The items as one Arrow table: a query's columns in the archive's own types (timestamps as
        timestamps, a claim's `value` as its literal), other items as their dicts' values."""
        import pyarrow as pa

        tabular = getattr(self.rows, "arrow", None)
        if tabular is not None:
            return tabular()
        items = list(self)
        return pa.table({name: [item.get(name) for item in items] for name in self.fields})

    def df(self) -> Any:
        """`arrow()` as a pandas DataFrame, or, where pandas is not installed, a polars DataFrame;
        `NoDataFrameLibraryError` when neither is."""
        table = self.arrow()
        try:
            import pandas  # noqa: F401
        except ImportError:
            pass
        else:
            return table.to_pandas()
        try:
            import polars
        except ImportError:
            raise NoDataFrameLibraryError(
                "a data frame needs pandas or polars: pip install 'a2a-archiver[dataframes]'"
            ) from None
        return polars.from_arrow(table)


@contextmanager
def as_text(out: BinaryIO) -> Iterator[TextIO]:
    """`out` as UTF-8 text for the renderers that write text, left open and flushed."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    try:
        yield text
    finally:
        text.flush()
        text.detach()
