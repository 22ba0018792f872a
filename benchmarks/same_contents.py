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
# sums of floating-point numbers kept by the differences of the writes (`archiver.store.cells`): their last bits
# depend on the order the numbers came in, so they are compared to within rounding, the rest of the row exactly
FLOAT_SUMS = {"cited_cells_kept": ("value_sum",)}
ROUNDING = 1e-9


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
        summed = [c for c in shared if c in FLOAT_SUMS.get(table, ())]
        exact = [c for c in shared if c not in summed]
        listed = ", ".join(f'"{c}"' for c in exact)
        for first, second in (("a", "b"), ("b", "a")):
            rows = f"SELECT {listed} FROM {first}.{table} EXCEPT ALL SELECT {listed} FROM {second}.{table}"
            extra = con.execute(f"SELECT count(*) FROM ({rows})").fetchone()[0]
            if extra:
                found.append(f"{table}: {extra:,} rows only in {'the first' if first == 'a' else 'the second'} archive")
        found += _sums_differing(con, table, exact, summed)
    return found


def _sums_differing(con: duckdb.DuckDBPyConnection, table: str, exact: list[str], summed: list[str]) -> list[str]:
    """Of the rows the same in both archives but for their sums (`FLOAT_SUMS`), those whose sum differs past
    rounding."""
    same = " AND ".join(f'x."{c}" IS NOT DISTINCT FROM y."{c}"' for c in exact)
    found = []
    for column in summed:
        x, y = f'x."{column}"', f'y."{column}"'
        close = f"abs({x} - {y}) <= {ROUNDING} * greatest(abs({x}), abs({y}))"
        (off,) = con.execute(
            f"""SELECT count(*) FROM a.{table} x JOIN b.{table} y ON {same}
                WHERE NOT ({x} IS NOT DISTINCT FROM {y} OR {close})"""
        ).fetchone()
        if off:
            found.append(f"{table}: {off:,} rows whose {column} differs past rounding")
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
