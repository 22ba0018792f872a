"""The Arrow schemas of the index tables as the migrated archive declares them: what the core's batches
are typed by (the archive's own schema is their one definition)."""

from __future__ import annotations

import pyarrow as pa

from ..store.tables import CHUNKED_COLUMNS, INDEX_TABLES, chunked


def arrow_schemas(con) -> dict[str, pa.Schema]:
    """Arrow schemas of the index tables as the migrated archive declares them.

    JSON columns are typed as Arrow's JSON extension: DuckDB takes such a value as it is, where a plain
    string is parsed again to be checked (a 300 MB file Part asked for 1 GiB more to be stored). The
    columns `<column>_chunked` are left out: the writer adds them (`load.chunks`)."""
    return {
        name: _json_typed(con, name, con.execute(f"SELECT * FROM {name} LIMIT 0").arrow().schema)
        for name in INDEX_TABLES
    }


def _json_typed(con, table: str, schema: pa.Schema) -> pa.Schema:
    json_columns = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall() if row[1] == "JSON"}
    markers = {chunked(column) for column in CHUNKED_COLUMNS.get(table, ())}
    return pa.schema(
        [
            field.with_type(pa.json_(pa.string())) if field.name in json_columns else field
            for field in schema
            if field.name not in markers
        ]
    )
