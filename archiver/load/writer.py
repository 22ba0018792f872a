"""Write one source file's rows in one transaction: all of it lands, or none of it."""
from __future__ import annotations

import duckdb

from ..store import models

DERIVED = (models.StoredCopy, models.IndexedPart, models.Citation, models.Claim, models.AgentCard, models.RpcError)


def write_file(con: duckdb.DuckDBPyConnection, path: str, tables: list, source: dict) -> int:
    """Store new raw records (an anti-join skips those already archived), replace the file's
    derived index rows, record the source version. Returns how many (non-filler) records were new."""
    present = {model for model, _ in tables}
    con.execute("BEGIN TRANSACTION")
    try:
        inserted = 0
        for model, table in tables:
            name = model.__tablename__
            con.register("_batch", table)
            if model is models.RawRecord:
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE _new AS SELECT b.* FROM _batch b WHERE NOT EXISTS "
                    "(SELECT 1 FROM records r WHERE r.source_path = ? AND r.record_id = b.record_id)",
                    [path],
                )
                inserted = con.execute("SELECT count(*) FROM _new WHERE kind <> 'filler'").fetchone()[0]
                con.execute("INSERT INTO records BY NAME SELECT * FROM _new")
                con.execute("DROP TABLE _new")
            else:
                con.execute(f"DELETE FROM {name} WHERE source_path = ?", [path])
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _batch")
            con.unregister("_batch")
        for model in DERIVED:
            if model not in present:
                con.execute(f"DELETE FROM {model.__tablename__} WHERE source_path = ?", [path])
        con.execute(
            "INSERT INTO sources BY NAME SELECT ? AS path, ? AS sha256, ? AS size, ? AS container, "
            "? AS compression, ? AS records, ? AS quarantined, ? AS recognised, ? AS ingested_at",
            [source[k] for k in ("path", "sha256", "size", "container", "compression", "records",
                                 "quarantined", "recognised", "ingested_at")],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return inserted
