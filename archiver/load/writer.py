"""Write source files' rows: each file lands whole or not at all.

Several files may share one transaction (a commit costs an fsync and may checkpoint), but a file
is never split across transactions; if a shared transaction fails, its files are written again one
transaction each, so only the file at fault is lost to the error.
"""
from __future__ import annotations

from collections import defaultdict

import duckdb
import pyarrow as pa

from .rows import INDEX_TABLES

DERIVED = INDEX_TABLES[1:]
SOURCE_COLUMNS = ("path", "sha256", "size", "container", "compression", "records", "quarantined", "recognised",
                  "ingested_at")


def write_files(con: duckdb.DuckDBPyConnection, files: list) -> list[int]:
    """Write prepared files (each with `.tables` and `.source_row`) in one transaction; returns how
    many (non-filler) records each added. Falls back to one transaction per file on failure."""
    if len(files) > 1:
        try:
            return _transaction(con, files)
        except duckdb.Error:
            pass
    return [count for prepared in files for count in _transaction(con, [prepared])]


def _transaction(con: duckdb.DuckDBPyConnection, files: list) -> list[int]:
    con.execute("BEGIN TRANSACTION")
    try:
        counts = _write(con, files)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return counts


def _write(con: duckdb.DuckDBPyConnection, files: list) -> list[int]:
    paths = [prepared.source_row["path"] for prepared in files]
    seen = {path for (path,) in con.execute(
        "SELECT DISTINCT path FROM sources WHERE list_contains(?, path)", [paths]).fetchall()}
    if seen:
        for name in DERIVED:
            con.execute(f"DELETE FROM {name} WHERE list_contains(?, source_path)", [sorted(seen)])
    counts = []
    batches: dict = defaultdict(list)
    for prepared, path in zip(files, paths):
        tables = dict(prepared.tables)
        records = tables.pop("records", None)
        counts.append(_insert_records(con, path, records, path in seen) if records is not None else 0)
        for name, table in tables.items():
            batches[name].append(table)
    for name, tables in batches.items():
        con.register("_batch", pa.concat_tables(tables))
        con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _batch")
        con.unregister("_batch")
    placeholders = ", ".join("?" for _ in SOURCE_COLUMNS)
    con.executemany(f"INSERT INTO sources ({', '.join(SOURCE_COLUMNS)}) VALUES ({placeholders})",
                    [[prepared.source_row[k] for k in SOURCE_COLUMNS] for prepared in files])
    return counts


def _insert_records(con: duckdb.DuckDBPyConnection, path: str, table: pa.Table, seen: bool) -> int:
    """Insert a file's records; for a path seen before, an anti-join skips those already stored."""
    con.register("_records", table)
    try:
        if not seen:
            con.execute("INSERT INTO records BY NAME SELECT * FROM _records")
            return table.num_rows - table.column("kind").to_pylist().count("filler")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _new AS SELECT b.* FROM _records b ANTI JOIN "
            "(SELECT record_id FROM records WHERE source_path = ?) r USING (record_id)",
            [path],
        )
        inserted = con.execute("SELECT count(*) FROM _new WHERE kind <> 'filler'").fetchone()[0]
        con.execute("INSERT INTO records BY NAME SELECT * FROM _new")
        con.execute("DROP TABLE _new")
        return inserted
    finally:
        con.unregister("_records")
