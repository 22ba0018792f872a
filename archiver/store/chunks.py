"""Values stored in chunks (`value_chunks`, migration 0011), read back whole.

A value longer than `CHUNK_BYTES` in a chunked column (`CHUNKED_COLUMNS`) is stored as its chunks, in
order, under the SHA-256 of the whole value; its cell is NULL and `<column>_chunked` names the hash
(`load.chunks` writes them). Several writers of a lake may each store the same value: a chunk stored
twice is read once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import duckdb

from ..errors import ArchiveError
from .tables import CHUNKS_TABLE

T = TypeVar("T")


def wholes_sql(wanted: str) -> str:
    """SQL of the whole values named by the subquery `wanted` (one column of SHA-256s), as rows
    (value_sha256, value BLOB), to be joined to the rows whose `<column>_chunked` names them. Each value is
    assembled in memory: for the few rows of a query, not for a whole table (a correlated subquery per row
    took 35 s for 5 values of 1 MB among 2,000; this join, 0.6 s)."""
    return f"""(
        SELECT value_sha256, unhex(string_agg(hex(chunk), '' ORDER BY seq)) AS value
        FROM (SELECT DISTINCT value_sha256, seq, chunk FROM {CHUNKS_TABLE} WHERE value_sha256 IN ({wanted}))
        GROUP BY value_sha256)"""


def pieces(con: duckdb.DuckDBPyConnection, sha256: str) -> Iterator[bytes]:
    """The chunks of the value stored under `sha256`, in order, one at a time."""
    cursor = con.cursor().execute(
        f"SELECT seq, chunk FROM {CHUNKS_TABLE} WHERE value_sha256 = ? ORDER BY seq", [sha256]
    )
    expected = 0
    while batch := cursor.fetchmany(64):
        for seq, chunk in batch:
            if seq < expected:  # stored twice (two writers of a lake stored the same value)
                continue
            if seq > expected:
                raise ArchiveError(f"the stored value {sha256} lacks its chunk {expected}: run `archiver db check`")
            expected += 1
            yield bytes(chunk)
    if expected == 0:
        raise ArchiveError(f"the stored value {sha256} has no chunks: run `archiver db check`")


def whole(con: duckdb.DuckDBPyConnection, cell: T, sha256: str | None) -> T | bytes:
    """A chunked column's value: its cell as it is, or the bytes of its chunks (`sha256`, the cell's
    `<column>_chunked`, names them)."""
    return cell if sha256 is None else b"".join(pieces(con, sha256))
