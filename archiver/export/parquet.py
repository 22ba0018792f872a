"""The index as Parquet, for DuckDB, Spark or Trino: tables with a study are partitioned by it."""
from __future__ import annotations

from pathlib import Path

import duckdb

PARTITIONED = ("citations", "claim_citations")
PLAIN = ("sources", "results", "parts", "claims", "agent_cards", "rpc_errors")


def export_parquet(con: duckdb.DuckDBPyConnection, directory: str) -> dict[str, str]:
    """Write every index table under `directory`; returns {table: path}. Citations and the
    claims-with-citations view go to hive partitions `study=<name>/` (absent study: __HIVE_DEFAULT_PARTITION__)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in PLAIN:
        target = root / f"{name}.parquet"
        con.execute(f"COPY (SELECT * FROM {name}) TO {_literal(target)} (FORMAT parquet)")
        written[name] = str(target)
    for name in PARTITIONED:
        target = root / name
        con.execute(f"COPY (SELECT * FROM {name}) TO {_literal(target)} "
                    "(FORMAT parquet, PARTITION_BY (study), OVERWRITE_OR_IGNORE)")
        written[name] = str(target)
    return written


def _literal(path: Path) -> str:
    """A path as a SQL string literal (COPY takes no bound parameter for its target)."""
    return "'" + str(path).replace("'", "''") + "'"
