"""What a migration cannot say in SQL: the index rows the core derives from stored values, derived again
for an archive made before the core derived them (`migrations.AFTER`, run in the migration's transaction).

Schema 14 (`migrations/0014_stated_claims.sql`): the claims of every agent's data Part that is not a
citation are read again, so that numbers stated in strings become claims and each claim has its cell,
as ingest now writes them."""

from __future__ import annotations

import duckdb

from .._core import claim_rows
from .chunks import whole

_PARTS = """
SELECT part_id, copy_id, result_key, source_path, content_hash, source_sha256, data, data_chunked
FROM parts WHERE kind = 'data' AND role = 'agent' AND NOT is_citation AND part_id IN (SELECT unnest(?))"""

_COUNTS = """
UPDATE results SET claims = coalesce(n.claims, 0)
FROM (SELECT r.copy_id, n.claims FROM results r
      LEFT JOIN (SELECT copy_id, count(DISTINCT (content_hash, pointer)) AS claims FROM claims GROUP BY copy_id) n
        ON n.copy_id = r.copy_id) n
WHERE n.copy_id = results.copy_id"""

_BATCH = 2_000  # Parts read, and their claims replaced, at a time
_COLUMNS = ("part_id", "copy_id", "result_key", "source_path", "content_hash", "source_sha256")
_CLAIM_COLUMNS = ("pointer", "value", "literal", "unit", "stated", "cell")


def claims_read_again(con: duckdb.DuckDBPyConnection) -> None:
    """Replace the claims of every agent's data Part that is not a citation by the core's reading of its
    data, and count each stored copy's claims again."""
    import pyarrow as pa  # here, not at the top: every command imports the migrations, few run this one (0.1 s)

    schema = pa.schema(
        [(name, pa.string()) for name in _COLUMNS]
        + [("pointer", pa.string()), ("value", pa.float64())]
        + [(name, pa.string()) for name in ("literal", "unit", "stated", "cell")]
    )
    wanted = "SELECT part_id FROM parts WHERE kind = 'data' AND role = 'agent' AND NOT is_citation ORDER BY part_id"
    part_ids = [part_id for (part_id,) in con.execute(wanted).fetchall()]
    for start in range(0, len(part_ids), _BATCH):
        batch = part_ids[start : start + _BATCH]
        columns: dict[str, list] = {name: [] for name in _COLUMNS + _CLAIM_COLUMNS}
        for row in con.execute(_PARTS, [batch]).fetchall():
            data = whole(con, row[6], row[7])
            if data is None:
                continue
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            for claim in claim_rows(text):
                for name, value in zip(_COLUMNS, row[:6], strict=True):
                    columns[name].append(value)
                for name, value in zip(_CLAIM_COLUMNS, claim, strict=True):
                    columns[name].append(value)
        con.execute("DELETE FROM claims WHERE part_id IN (SELECT unnest(?))", [batch])
        con.register("archiver_claims_read_again", pa.table(columns, schema=schema))
        try:
            con.execute("INSERT INTO claims BY NAME SELECT * FROM archiver_claims_read_again")
        finally:
            con.unregister("archiver_claims_read_again")
    con.execute(_COUNTS)
