"""Arrow schemas derived from the SQLModel tables, so a batch always matches its table."""
from __future__ import annotations

from functools import cache

import pyarrow as pa
from sqlalchemy import JSON, BigInteger, Boolean, Date, DateTime, Float, Integer, LargeBinary, String
from sqlalchemy.types import ARRAY, TypeDecorator


def _arrow_type(sql_type) -> pa.DataType:
    if isinstance(sql_type, TypeDecorator):
        sql_type = sql_type.impl_instance
    if isinstance(sql_type, ARRAY):
        return pa.list_(_arrow_type(sql_type.item_type))
    for sql, arrow in (
        (BigInteger, pa.int64()), (Integer, pa.int32()), (Boolean, pa.bool_()), (Float, pa.float64()),
        (DateTime, pa.timestamp("us", tz="UTC")), (Date, pa.date32()), (LargeBinary, pa.large_binary()),
        (JSON, pa.string()), (String, pa.string()),
    ):
        if isinstance(sql_type, sql):
            return arrow
    raise TypeError(f"no Arrow type for {sql_type!r}")


@cache
def schema_of(model) -> pa.Schema:
    return pa.schema([pa.field(c.name, _arrow_type(c.type)) for c in model.__table__.columns])


def table_of(model, columns: dict[str, list]) -> pa.Table:
    schema = schema_of(model)
    length = len(next(iter(columns.values()), []))
    arrays = [pa.array(columns.get(f.name, [None] * length), type=f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
