"""An archive of about N claims made from a smaller or larger one, without ingesting anything: the scaled
archives `benchmarks/run` and `benchmarks/serve_load` ask their questions of.

Generic over the schema: every base table whose rows belong to a stored copy (a column among `KEYS`) is
scaled, whatever tables a revision adds (a kept index maintained by ingest included), and every key column
among `RENAMED` is renamed alike in all of them (text suffixed, integers shifted), so a replica is a result
of its own everywhere.

    python -m benchmarks.scale SOURCE.duckdb TARGET.duckdb 100000000
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

# a row holding one of these belongs to one stored copy, and is kept or replicated with it
KEYS = ("result_key", "copy_id", "part_id")
# renamed in every replica: the keys, and the ids a reader asks by, so no two replicas answer as one task
RENAMED = (*KEYS, "task_id", "context_id")


def keyed_tables(con, catalog: str | None = None) -> dict[str, list[str]]:
    """Every base table of the archive (the open one, or the attached `catalog`) whose rows belong to stored
    copies, with its columns in order."""
    rows = con.execute(
        """SELECT c.table_name, c.column_name FROM information_schema.columns c
           JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
           WHERE t.table_type = 'BASE TABLE' AND c.table_schema = 'main'
             AND c.table_catalog = coalesce(?, current_database())
           ORDER BY c.table_name, c.ordinal_position""",
        [catalog],
    ).fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    return {table: names for table, names in columns.items() if set(names) & set(KEYS)}


def scale_archive(source_db: Path, target_db: Path, claims_wanted: int, say=lambda line: None) -> int:
    """An archive with about `claims_wanted` claims: when the source holds more, a new archive of whole
    results taken from it (with their records and sources, as an ingest of fewer files would store them;
    deleting from a copy would leave the dropped rows in its row groups for every scan to pass over);
    when it holds fewer, a copy with its results replicated under fresh ids. `say` hears each step's time."""
    import duckdb

    target_db.unlink(missing_ok=True)
    Path(f"{target_db}.wal").unlink(missing_ok=True)
    with duckdb.connect(str(source_db), read_only=True) as source:
        have = source.execute("SELECT count(*) FROM claims").fetchone()[0]
        results = source.execute("SELECT count(*) FROM results").fetchone()[0]
    if have > claims_wanted:
        con = _subset(source_db, target_db, round(results * claims_wanted / have), say)
    else:
        shutil.copy(source_db, target_db)
        con = duckdb.connect(str(target_db))
        con.execute("SET enable_progress_bar = false")
        _replicate(con, -(-claims_wanted // have), say)
    started = time.perf_counter()
    con.execute("CHECKPOINT")
    say(f"checkpoint {time.perf_counter() - started:,.1f} s")
    total = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    con.close()
    _audit_again(target_db, say)
    return total


AUDIT_KEPT = ("audit_findings_kept", "audit_status_kept", "audit_quantities_kept", "audit_quantities_pending")


def _audit_again(target_db: Path, say) -> None:
    """Make the kept audit (`archiver.audit.kept`) of every result again from its definition: its findings are
    sentences naming their tasks, so a replica's copied rows would name the original's task; and the kept counts
    (`archiver.store.counts`), whose sums were copied whole (a revision without them has nothing to make). Each is
    made in one transaction over every result, as a refresh makes a batch (its `_make`): the batched refresh an
    upgrade runs scans the archive once a batch, and at 100M claims (48 batches) it ran past 35 minutes."""
    import duckdb

    with duckdb.connect(str(target_db), read_only=True) as con:
        have = {
            name
            for (name,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
        }
    if "audit_pending" not in have:
        return
    from archiver.archive import Archive
    from archiver.audit import kept as audit_kept
    from archiver.audit.wording import define as define_wording
    from archiver.store.connection import transaction

    every = "result_key IS NOT NULL"
    started = time.perf_counter()
    with Archive.open(str(target_db), upgrade=False) as archive:
        con = archive.con
        if "cited_cells_kept" in have:  # an aggregate of the claim index, whose replicas it holds once
            from archiver.store import cells

            with transaction(con):
                cells.rebuild(con)
            say(f"kept cited cells made again {time.perf_counter() - started:,.1f} s")
            started = time.perf_counter()
        if "counts_kept" in have:
            from archiver.store import counts

            with transaction(con):
                for table in ("result_counts_kept", "counts_kept", "counts_pending"):
                    con.execute(f"DELETE FROM {table}")
                counts._make(con, every)
            say(f"kept counts made again {time.perf_counter() - started:,.1f} s")
            started = time.perf_counter()
        define_wording(con)
        with transaction(con):
            for table in (*AUDIT_KEPT, "audit_pending", "audit_summary_kept"):
                if table in have:  # the sums since schema 20, changed by `_make` from nothing
                    con.execute(f"DELETE FROM {table}")
            audit_kept._make(con, every)
        with transaction(con):  # the conflicting-claims findings of every quantity, which `_make` left pending
            audit_kept._make_conflicts(con, "quantity IS NOT NULL")
            con.execute("DELETE FROM audit_quantities_pending")
    say(f"kept audit made again {time.perf_counter() - started:,.1f} s")


def _replicate(con, copies: int, say) -> None:
    """Every keyed table's rows `copies - 1` times more, replica k's keys renamed (`_renamed`): one INSERT ...
    SELECT over range() a table, from a temporary copy of its rows as they were."""
    keyed = keyed_tables(con)
    renamed = _renamed(con, keyed)
    indexes = con.execute("SELECT index_name, sql FROM duckdb_indexes() WHERE database_name = current_database()")
    indexes = indexes.fetchall()
    for name, _ in indexes:  # made again after: an ART index built once is faster than one kept row by row
        con.execute(f"DROP INDEX {name}")
    for table, columns in keyed.items():
        started = time.perf_counter()
        select = ", ".join(f"{renamed[c]} AS {c}" if c in renamed else c for c in columns)
        con.execute(f"CREATE TEMP TABLE base_{table} AS SELECT * FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT {select} FROM base_{table}, range(1, {copies}) t(k)")
        con.execute(f"DROP TABLE base_{table}")
        say(f"{table} x{copies} {time.perf_counter() - started:,.1f} s")
    for name, sql in indexes:
        started = time.perf_counter()
        con.execute(sql)
        say(f"index {name} {time.perf_counter() - started:,.1f} s")


def _renamed(con, keyed: dict[str, list[str]]) -> dict[str, str]:
    """For each column of `RENAMED`, its value in replica k, the same in every table: text suffixed `~k`, an
    integer shifted by k times one more than its largest value in any table."""
    types = dict(
        con.execute(
            "SELECT DISTINCT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND list_contains(?, column_name)",
            [list(RENAMED)],
        ).fetchall()
    )
    renamed = {}
    for column, kind in types.items():
        if kind in ("INTEGER", "BIGINT", "HUGEINT", "UINTEGER", "UBIGINT", "UHUGEINT"):
            largest = [f"(SELECT max({column}) FROM {table})" for table, names in keyed.items() if column in names]
            (span,) = con.execute(f"SELECT coalesce(greatest({', '.join(largest)}), 0) + 1").fetchone()
            renamed[column] = f"{column} + k * {span}"
        else:
            renamed[column] = f"{column} || '~' || k"
    return renamed


def _subset(source_db: Path, target_db: Path, keep: int, say):
    """A new archive of the source's first `keep` results (by result key, with all their copies) and what
    belongs to them."""
    import duckdb

    from archiver.store.migrations import upgrade

    con = duckdb.connect(str(target_db))
    con.execute("SET enable_progress_bar = false")
    upgrade(con)
    made = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE estimated_size > 0").fetchall()}
    # (the schema's own bookkeeping, written by the upgrade, is not copied)
    con.execute(f"ATTACH '{source_db}' AS src (READ_ONLY)")
    con.execute(  # every copy of the results kept: "counted once" stays what it was for them
        f"""CREATE TEMP TABLE kept AS SELECT copy_id, result_key FROM src.results WHERE result_key IN
            (SELECT DISTINCT result_key FROM src.results ORDER BY result_key LIMIT {keep})"""
    )
    con.execute(
        "CREATE TEMP TABLE kept_parts AS SELECT part_id FROM src.parts WHERE copy_id IN (SELECT copy_id FROM kept)"
    )
    keyed = keyed_tables(con, "src")
    for table in ("results", *sorted(set(keyed) - {"results"})):
        started = time.perf_counter()
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} AS FROM src.{table} LIMIT 0")
        key = next(k for k in ("copy_id", "result_key", "part_id") if k in keyed[table])
        among = {"copy_id": "kept", "result_key": "kept", "part_id": "kept_parts"}[key]
        con.execute(f"DELETE FROM {table}")  # what the upgrade derived from no results
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM src.{table} WHERE {key} IN (SELECT {key} FROM {among})")
        say(f"{table} {time.perf_counter() - started:,.1f} s")
    con.execute("""INSERT INTO records SELECT * FROM src.records
                   WHERE record_id IN (SELECT unnest(record_ids) FROM results) OR status = 'quarantined'""")
    con.execute("INSERT INTO sources SELECT * FROM src.sources WHERE path IN (SELECT source_path FROM records)")
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()")
    for (table,) in tables.fetchall():  # what no stored copy owns (agent cards, errors, chunks) is kept whole
        if table not in {*keyed, "records", "sources", *made}:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM src.{table}")
    con.execute("DETACH src")
    return con


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("claims", type=int)
    args = parser.parse_args()
    started = time.perf_counter()
    total = scale_archive(args.source, args.target, args.claims, say=lambda line: print(line, file=sys.stderr))
    size = sum(p.stat().st_size for p in (args.target, Path(f"{args.target}.wal")) if p.exists())
    print(f"{total:,} claims in {time.perf_counter() - started:,.0f} s, {size / 2**30:,.1f} GiB")


if __name__ == "__main__":
    main()
