"""The index as Parquet, for DuckDB, Spark or Trino: tables with a study are partitioned by its key.

Hive-style readers disagree on partition folder names that need escaping: DuckDB, pyarrow and polars
URL-decode `study=%C3%89tude…`, Spark reads the UTF-8 bytes as Latin-1. So the folders are named by
`study_key`, an ASCII slug of the study plus a short hash of it (`etude-sante-2026_3bd7fecc`), which no
reader decodes, and the study itself stays a column of the files.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..store.tables import CHUNKED_COLUMNS, CHUNKS_TABLE, chunked

PARTITIONED = ("citations", "claim_citations")
PLAIN = ("sources", "results", "parts", "claims", "agent_cards", "rpc_errors")
EXPORTED_CHUNKS = " UNION ALL ".join(
    f"SELECT {chunked(column)} FROM {table}"
    for table, columns in CHUNKED_COLUMNS.items()
    if table in PLAIN + PARTITIONED
    for column in columns
)
"""The values longer than 30 KiB of the exported tables (`store.chunks`), written as `value_chunks`."""
SLUG_LENGTH = 40
STUDY_KEY = (
    f"coalesce(nullif(trim(left(regexp_replace(lower(strip_accents(study)), '[^a-z0-9]+', '-', 'g'), "
    f"{SLUG_LENGTH}), '-'), ''), 'study') || '_' || left(sha256(study), 8)"
)
"""SQL of the partition key: ASCII letters, digits and '-' from the study, '_', then 8 hex digits of the
SHA-256 of its UTF-8 (so studies whose slugs agree get different folders); NULL for no study."""


def export_parquet(con: duckdb.DuckDBPyConnection, directory: str) -> dict[str, str]:
    """Write every index table under `directory`; returns {table: path}. Citations and the
    claims-with-citations view go to hive partitions `study_key=<key>/` (no study: __HIVE_DEFAULT_PARTITION__)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in PLAIN:
        target = root / f"{name}.parquet"
        con.execute(f"COPY (SELECT * FROM {name}) TO {_literal(target)} (FORMAT parquet)")
        written[name] = str(target)
    target = root / f"{CHUNKS_TABLE}.parquet"
    con.execute(
        f"COPY (SELECT * FROM {CHUNKS_TABLE} WHERE value_sha256 IN ({EXPORTED_CHUNKS})) "
        f"TO {_literal(target)} (FORMAT parquet, ROW_GROUP_SIZE 2048)"  # a row group of 30 KiB chunks: 60 MiB
    )
    written[CHUNKS_TABLE] = str(target)
    for name in PARTITIONED:
        target = root / name
        con.execute(
            f"COPY (SELECT *, {STUDY_KEY} AS study_key FROM {name}) TO {_literal(target)} "
            "(FORMAT parquet, PARTITION_BY (study_key), OVERWRITE_OR_IGNORE)"
        )
        written[name] = str(target)
    return written


def _literal(path: Path) -> str:
    """A path as a SQL string literal (COPY takes no bound parameter for its target)."""
    return "'" + str(path).replace("'", "''") + "'"
