"""A source's records as the core reads them, through ingest's one call to it (`_core.index_files`): the rows
of the `records` table it makes, in order, and the container and compression it says the source is."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import pyarrow as pa

from archiver import _core

NO_RATIO = 2**64 - 1
"""A gzip ratio no stream reaches: only the gzip limit bounds what it expands to."""


@cache
def schemas() -> dict:
    """The Arrow schemas of a migrated archive, made once."""
    import duckdb

    from archiver.load.schemas import arrow_schemas
    from archiver.store import migrations

    con = duckdb.connect()
    migrations.upgrade(con)
    return arrow_schemas(con)


@dataclass
class Read:
    container: str | None
    compression: str | None
    records: list[dict]
    """The rows of `records` (seq, locator, kind, byte_offset, raw, status, reason, ...), by seq."""


def read(
    name: str,
    *,
    data: bytes | None = None,
    path: str | None = None,
    record_limit: int,
    gzip_limit: int,
    gzip_ratio: int = NO_RATIO,
) -> Read:
    """The records of `data` (in memory) or of the file at `path`, archived as `name`, within the limits."""
    spec: dict = {"path": name, "key": "0" * 64, "sha256": "0" * 64}
    if data is not None:
        spec |= {"data": data, "size": len(data)}
    else:
        assert path is not None
        spec |= {"open": os.fsencode(path), "size": os.path.getsize(path)}
    index = _core.index_files([spec], schemas(), 1_767_225_600_000_000, record_limit, gzip_limit, gzip_ratio)
    rows: list[dict] = []
    for table, batch in index:
        if table is None:  # what came before is void
            rows = []
        elif table == "records":
            rows += pa.record_batch(batch).to_pylist()
    (outcome,) = index.outcomes()
    return Read(outcome["container"], outcome["compression"], sorted(rows, key=lambda row: row["seq"]))
