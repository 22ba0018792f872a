"""Rows out of DuckDB, in batches, into table, json, jsonl or csv: nothing is held whole in memory."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from itertools import islice
from typing import IO, Any

import duckdb
import orjson
import pyarrow as pa

FORMATS = ("table", "json", "jsonl", "csv")
BATCH_SIZE = 2048
TABLE_SAMPLE = 200  # rows read ahead to size the table's columns
MIN_WIDTH = 6


def executed(cursor: duckdb.DuckDBPyConnection, sql: str, params: list) -> Iterator[dict[str, Any]]:
    """`stream` of a query run only when its first row is wanted."""
    yield from stream(cursor.execute(sql, params))


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


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value, ensure_ascii=False, default=str)


def json_text(
    cursor: duckdb.DuckDBPyConnection, sql: str, params: list, fields: Iterable[str], fmt: str
) -> Iterator[tuple[int, memoryview | bytes]] | None:
    """The rows of a query as DuckDB writes them in JSON, the values `plain` would give: JSON Lines,
    or for "json" each row preceded by ",\n". (rows, text) chunks, no Python object per row; None
    when a column's type is one only the Python path renders as `write` would."""
    fields = list(fields)
    described = {
        name: str(kind) for name, kind, *_ in cursor.execute(f"SELECT * FROM ({sql}) LIMIT 0", params).description
    }
    values = [_json_value(f'q."{name}"', name, described.get(name)) for name in fields]
    if None in values:
        return None
    row = (
        "to_json(struct_pack("
        + ", ".join(f'"{name}" := {value}' for name, value in zip(fields, values, strict=False))
        + "))"
    )
    line = f"{row} || chr(10)" if fmt == "jsonl" else f"',' || chr(10) || {row}"
    reader = cursor.execute(f"SELECT {line} FROM ({sql}) q", params).to_arrow_reader(JSON_BATCH_SIZE)
    return ((batch.num_rows, _text(batch.column(0))) for batch in reader)


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


def write(
    rows: Iterable[dict],
    fields: Iterable[str],
    fmt: str,
    out: IO[str],
    table_fields: Iterable[str] | None = None,
    width: int | None = None,
) -> int:
    """Write rows in `fmt`; returns how many were written."""
    fields = list(fields)
    json = getattr(rows, "json", None)
    chunks = json(fmt) if json is not None and fmt in ("json", "jsonl") else None
    if chunks is not None:
        return _json_chunks(chunks, fmt, out)
    if fmt == "table":
        return _table(rows, list(table_fields or fields), out, width)
    writer = {"json": _json, "jsonl": _jsonl, "csv": _csv}.get(fmt)
    if writer is None:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    return writer(rows, fields, out)


def _json_chunks(chunks: Iterator[tuple[int, memoryview | bytes]], fmt: str, out: IO[str]) -> int:
    binary = getattr(out, "buffer", None)
    out.flush()

    def put(text: memoryview | bytes) -> None:
        binary.write(text) if binary is not None else out.write(bytes(text).decode())

    count = 0
    if fmt == "json":
        put(b"[")
    for rows, text in chunks:
        if rows:
            put(text[1:] if fmt == "json" and count == 0 else text)  # the first row has no comma before it
            count += rows
    if fmt == "json":
        put(b"\n]\n" if count else b"]\n")
    if binary is not None:
        binary.flush()
    return count


def _jsonl(rows: Iterable[dict], fields: list[str], out: IO[str]) -> int:
    count = 0
    for count, row in enumerate(rows, start=1):
        out.write(dumps({f: row.get(f) for f in fields}) + "\n")
    return count


def _json(rows: Iterable[dict], fields: list[str], out: IO[str]) -> int:
    out.write("[")
    count = 0
    for count, row in enumerate(rows, start=1):
        out.write(("\n" if count == 1 else ",\n") + dumps({f: row.get(f) for f in fields}))
    out.write("\n]\n" if count else "]\n")
    return count


def _csv(rows: Iterable[dict], fields: list[str], out: IO[str]) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    count = 0
    for count, row in enumerate(rows, start=1):
        writer.writerow([_csv_cell(row.get(f)) for f in fields])
    return count


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return dumps(value)
    return value


def _table(rows: Iterable[dict], fields: list[str], out: IO[str], width: int | None) -> int:
    """Aligned columns sized from the first rows, shrunk to fit the terminal (80 columns if unknown)."""
    rows = iter(rows)
    head = list(islice(rows, TABLE_SAMPLE))
    widths = [max([len(f)] + [len(_cell(r.get(f))) for r in head]) for f in fields]
    _fit(widths, width or shutil.get_terminal_size((80, 24)).columns)
    numeric = [
        bool(head)
        and all(
            isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool) for r in head if r.get(f) is not None
        )
        for f in fields
    ]
    out.write(_line(fields, widths, [False] * len(fields)) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    count = 0
    for count, row in enumerate(head, start=1):
        out.write(_line([_cell(row.get(f)) for f in fields], widths, numeric) + "\n")
    for row in rows:
        count += 1
        out.write(_line([_cell(row.get(f)) for f in fields], widths, numeric) + "\n")
    out.write(f"({count} row{'' if count == 1 else 's'})\n")
    return count


def _fit(widths: list[int], total: int) -> None:
    while sum(widths) + 2 * (len(widths) - 1) > total:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= MIN_WIDTH:
            return
        widths[widest] -= 1


def _line(cells: list[str], widths: list[int], numeric: list[bool]) -> str:
    parts = []
    for cell, width, right in zip(cells, widths, numeric, strict=False):
        cell = cell if len(cell) <= width else cell[: width - 1] + "…"
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
    return " ".join(str(value).split())
