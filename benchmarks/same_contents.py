"""Whether two archives hold the same contents: every table both have, compared row for row
(EXCEPT ALL both ways) on the columns both have, leaving out the moments a row was written.

A change that makes ingest faster must leave what it stores unchanged; new columns one archive has
and the other lacks (a later schema's keys) are left out of the comparison and named.

    python -m benchmarks.same_contents before.duckdb after.duckdb
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

# when a row was written, not what it says
MOMENTS = {"ingested_at", "healed_at", "verified_at", "applied_at", "made_at"}
# the archive's own bookkeeping, which differs by schema version by design
BOOKKEEPING = {"schema_migrations", "schema_views"}


def columns(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for table, column in con.execute(
        """SELECT table_name, column_name FROM information_schema.columns
           JOIN information_schema.tables USING (table_catalog, table_schema, table_name)
           WHERE table_catalog = ? AND table_type = 'BASE TABLE' ORDER BY table_name, ordinal_position""",
        [catalog],
    ).fetchall():
        found.setdefault(table, []).append(column)
    return found


def differences(left: Path | str, right: Path | str, con: duckdb.DuckDBPyConnection | None = None) -> list[str]:
    """One line per difference; none when the contents are the same. Either may be a lake's
    `ducklake:...` URL when `con` has what attaching it needs (DuckLake, its catalog's scanner, the
    object store's extension and credentials)."""
    con = con or duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"ATTACH '{left}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{right}' AS b (READ_ONLY)")
    a, b = columns(con, "a"), columns(con, "b")
    found = []
    for table in sorted((set(a) | set(b)) - BOOKKEEPING):
        if table not in a or table not in b:
            found.append(f"{table}: only in {'the first' if table in a else 'the second'} archive")
            continue
        shared = [c for c in a[table] if c in b[table] and c not in MOMENTS]
        unshared = sorted((set(a[table]) ^ set(b[table])) - MOMENTS)
        if unshared:
            print(f"{table}: not compared, in one archive only: {', '.join(unshared)}", file=sys.stderr)
        listed = ", ".join(f'"{c}"' for c in shared)
        for first, second in (("a", "b"), ("b", "a")):
            rows = f"SELECT {listed} FROM {first}.{table} EXCEPT ALL SELECT {listed} FROM {second}.{table}"
            extra = con.execute(f"SELECT count(*) FROM ({rows})").fetchone()[0]
            if extra:
                found.append(f"{table}: {extra:,} rows only in {'the first' if first == 'a' else 'the second'} archive")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args()
    found = differences(args.first, args.second)
    print("\n".join(found) or "same contents")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
