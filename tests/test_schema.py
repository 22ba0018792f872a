"""The migrated schema and the typed rows (`store.models`) agree: every table has its model and every
model its table, with the same columns, types and nullability. A migration that adds a column without
the model (or a model column without a migration) fails here."""

from __future__ import annotations

import pytest
from sqlalchemy import JSON, BigInteger, Boolean, Date, DateTime, Float, Integer, LargeBinary, String
from sqlalchemy.types import ARRAY, TypeDecorator

from archiver.store.models import ROWS
from tests.transcripts import rows

DUCKDB_TYPES = (
    (BigInteger, "BIGINT"),
    (Integer, "INTEGER"),
    (Boolean, "BOOLEAN"),
    (Float, "DOUBLE"),
    (DateTime, "TIMESTAMP WITH TIME ZONE"),
    (Date, "DATE"),
    (LargeBinary, "BLOB"),
    (JSON, "JSON"),
    (String, "VARCHAR"),
)


def duckdb_type(sql_type) -> str:
    if isinstance(sql_type, TypeDecorator):
        sql_type = sql_type.impl_instance
    if isinstance(sql_type, ARRAY):
        return duckdb_type(sql_type.item_type) + "[]"
    return next(name for kind, name in DUCKDB_TYPES if isinstance(sql_type, kind))


def migrated_tables(archive) -> dict[str, dict[str, tuple[str, bool]]]:
    """Each base table of the archive: its columns' DuckDB types and whether they take NULL."""
    tables: dict[str, dict[str, tuple[str, bool]]] = {}
    for table, column, kind, nullable in rows(
        archive,
        "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'YES' FROM information_schema.columns c "
        "JOIN information_schema.tables t USING (table_schema, table_name) WHERE t.table_type = 'BASE TABLE' "
        "ORDER BY c.table_name, c.ordinal_position",
    ):
        tables.setdefault(table, {})[column] = (kind, nullable)
    return tables


@pytest.mark.slow
def test_every_table_has_a_model_and_every_model_a_table(archive):
    assert sorted(migrated_tables(archive)) == sorted(ROWS)


@pytest.mark.slow
@pytest.mark.parametrize("table", sorted(ROWS))
def test_a_model_has_its_tables_columns(archive, table):
    columns = {
        column.name: (duckdb_type(column.type), bool(column.nullable)) for column in ROWS[table].__table__.columns
    }
    assert columns == migrated_tables(archive).get(table)


def test_rows_are_named_after_their_tables():
    for table, model in ROWS.items():
        words = table.removesuffix("s").split("_")
        assert model.__name__ == "".join(word.title() for word in words) + "Row", table
