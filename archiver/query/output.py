"""Rows out of DuckDB, in batches, as dicts of machine-ready values or as JSON text DuckDB writes:
nothing is held whole in memory. The formats that write them are `archiver.render.formats`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from ..errors import QueryError
from ..store import views
from .listing import Chunks

BATCH_SIZE = 2048


class ArchiveClosedError(QueryError):
    """Rows read from an archive after it was closed."""


@dataclass(frozen=True)
class QueryRows:
    """The rows of one query, run again each time they are read: iterated (as `stream`'s dicts, the query
    run when the first row is wanted), counted (`len`, a `count(*)` of the query) or fetched as Arrow, for
    as long as the archive they were asked of is open."""

    con: duckdb.DuckDBPyConnection
    sql: str
    params: list | dict = field(default_factory=list)
    own_connection: bool = False
    """Run on `con` itself, not a cursor of it: the query reads the connection's temporary tables."""
    cursor_of: Callable[[duckdb.DuckDBPyConnection], duckdb.DuckDBPyConnection] = views.cursor
    """Where a run gets its cursor of `con` (`query.limits.Limits.cursor`: one its watcher can stop)."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from stream(self.run())

    def __len__(self) -> int:
        return self.run(f"SELECT count(*) FROM (\n{self.sql}\n)").fetchone()[0]

    def arrow(self) -> pa.Table:
        """The rows as one Arrow table, of the archive's own column types."""
        return self.run().to_arrow_table()

    def described(self) -> list[tuple]:
        """The query's columns as DuckDB describes them (name, type, ...), without running it."""
        return self.run(f"SELECT * FROM (\n{self.sql}\n) LIMIT 0").description

    def run(self, sql: str | None = None) -> duckdb.DuckDBPyConnection:
        """A cursor of `sql` (default: the query itself) executed with the query's parameters."""
        try:
            con = self.con if self.own_connection else self.cursor_of(self.con)
            return con.execute(self.sql if sql is None else sql, self.params)
        except duckdb.ConnectionException as exc:
            raise ArchiveClosedError("the archive these rows come from is closed: read them while it is open") from exc


def stream(cursor: duckdb.DuckDBPyConnection, batch_size: int = BATCH_SIZE) -> Iterator[dict[str, Any]]:
    """Rows of an executed cursor as dicts, read as Arrow batches of `batch_size`, machine-ready values."""
    for batch in cursor.to_arrow_reader(batch_size):
        names = batch.schema.names
        columns = [_plain_column(name, column) for name, column in zip(names, batch.columns, strict=False)]
        for values in zip(*columns, strict=False):
            yield dict(zip(names, values, strict=False))


def _plain_column(name: str, column: pa.Array) -> list:
    """`plain` applied to a whole column, and only where a value can need it."""
    values = _python_values(column)
    kind = column.type
    if (
        name == "value"
        or name == "base_n"
        or pa.types.is_timestamp(kind)
        or pa.types.is_date(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    ):
        return [plain(name, value) for value in values]
    return values


_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH = datetime(1970, 1, 1)


def _python_values(column: pa.Array) -> list:
    """A column's Python values; timestamps built directly (Arrow's per-value time zones are slow)."""
    if not pa.types.is_timestamp(column.type):
        return column.to_pylist()
    epoch = _EPOCH_UTC if column.type.tz else _EPOCH
    micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64()).to_pylist()
    return [None if m is None else epoch + timedelta(microseconds=m) for m in micros]


def plain(name: str, value: Any) -> Any:
    """Values as JSON would hold them: a claim's value from its literal, integral counts as integers."""
    if name == "value" and isinstance(value, str):
        return number(value)
    if isinstance(value, float) and name == "base_n" and value.is_integer():
        return int(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return value


def number(literal: str) -> int | float | str:
    try:
        return int(literal)
    except ValueError:
        pass
    try:
        return float(literal)
    except ValueError:
        return literal


def json_text(rows: QueryRows, fields: Iterable[str]):
    """`Listing.spelled` of a query's rows: their JSON written by DuckDB, the values `plain` gives, each row
    after the separator; (rows, text) chunks, no Python object per row. For the lineage queries, whose
    columns all have a spelling here (`_json_value`): a type without one raises ValueError."""
    fields = list(fields)

    def spelled(separator: str, depth: int | None) -> Chunks:
        if depth is not None:
            raise ValueError("rows are spelled compact")
        described = {name: str(kind) for name, kind, *_ in rows.described()}
        values = [_json_value(f'q."{name}"', name, described.get(name)) for name in fields]
        if None in values:
            missing = [name for name, value in zip(fields, values, strict=True) if value is None]
            raise ValueError(f"no JSON spelling in SQL for the column(s) {', '.join(missing)}")
        row = (
            "to_json(struct_pack("
            + ", ".join(f'"{name}" := {value}' for name, value in zip(fields, values, strict=False))
            + "))"
        )
        before = "'" + separator.replace("'", "''").replace("\n", "' || chr(10) || '") + "'"
        reader = rows.run(f"SELECT {before} || {row} FROM (\n{rows.sql}\n) q").to_arrow_reader(JSON_BATCH_SIZE)
        return ((batch.num_rows, _text(batch.column(0))) for batch in reader)

    return spelled


JSON_BATCH_SIZE = 16384
_PLAIN_TYPES = {
    "VARCHAR",
    "VARCHAR[]",
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "DATE",
}
_ISO = (
    "CASE WHEN microsecond({0}) % 1000000 = 0 THEN strftime({0}, '%Y-%m-%dT%H:%M:%S{1}') "
    "ELSE strftime({0}, '%Y-%m-%dT%H:%M:%S.%f{1}') END"
)


def _json_value(column: str, name: str, kind: str | None) -> str | None:
    """SQL for one column's value as `plain` has it, ready for `to_json`; None if not expressible."""
    if kind is None:
        return None
    if name == "value" and kind == "VARCHAR":  # a claim's literal, written by ingest as Python writes numbers
        return f"CASE WHEN {column} IN ('nan', 'inf', '-inf') THEN NULL ELSE CAST({column} AS JSON) END"
    if kind in ("DOUBLE", "FLOAT"):
        finite = f"CASE WHEN isfinite({column}) THEN to_json({column}) END"
        if name == "base_n":
            return (
                f"CASE WHEN isfinite({column}) AND {column} = trunc({column}) AND abs({column}) < 9e18 "
                f"THEN to_json(CAST({column} AS BIGINT)) ELSE {finite} END"
            )
        return finite
    if kind in ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP"):  # isoformat, in UTC for a zoned time
        utc = f"make_timestamp(epoch_us({column}))" if kind != "TIMESTAMP" else column
        return _ISO.format(utc, "+00:00" if kind != "TIMESTAMP" else "")
    if kind == "JSON":  # read as text by the Python path
        return f"CAST({column} AS VARCHAR)"
    return column if kind in _PLAIN_TYPES else None


def _text(array: pa.Array) -> memoryview | bytes:
    """The concatenated values of a string array without a Python object per value."""
    width = {pa.string(): "i", pa.large_string(): "q"}.get(array.type)
    if width is None or array.null_count:
        return "".join(value for value in array.to_pylist() if value is not None).encode()
    _validity, offsets, data = array.buffers()
    bounds = memoryview(offsets).cast(width)
    return memoryview(data)[bounds[array.offset] : bounds[array.offset + len(array)]]
