"""The archive on DuckLake: where a lake is, every command on it as on a file, its migrations and connections,
the transfer between a file and a lake, and the README's walk-through to a PostgreSQL lake (the fixtures:
`tests/lakes.py`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from archiver.archive import Archive
from archiver.store.backend import locate
from tests.lakes import EVERY_CATALOG, on, run, start_writer, stored
from tests.transcripts import SAMPLES, assert_offline_and_locked

pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed: pip install '.[lake]'")

pytestmark = [pytest.mark.lake, pytest.mark.usefixtures("lake_environment")]


def test_locations_are_parsed_in_one_place(tmp_path):
    assert locate(str(tmp_path / "a.duckdb")).catalog == "file"
    pg = locate("ducklake:postgres:dbname=x host=127.0.0.1", "s3://bucket/lake")
    assert (pg.catalog, pg.catalog_path, pg.data_path) == ("postgres", "dbname=x host=127.0.0.1", "s3://bucket/lake")
    sqlite = locate(f"ducklake:sqlite:{tmp_path}/c.sqlite")
    assert (sqlite.catalog, sqlite.data_path) == ("sqlite", f"{tmp_path}/c.sqlite.files/")
    assert locate("ducklake:x.ducklake").catalog == "duckdb"
    assert locate("ducklake:x.ducklake").catalog_path.startswith("/")


# Every kind: each catalog holds the lake's metadata (snapshots, schema, statistics) in its own database and types,
# and every command must read back from each what a file archive holds.
@on(*EVERY_CATALOG)
def test_every_command_on_a_lake(lake, tmp_path):
    db, data = lake
    opts = ["--db", db, "--data-path", data]
    out = run("ingest", str(SAMPLES), *opts, "--json")
    summary = json.loads(out)
    assert summary["quarantined"] == 0
    assert summary["claimed_elsewhere"] == []
    run("ingest", str(SAMPLES), *opts)  # again: nothing new
    file_db = str(tmp_path / "single.duckdb")
    run("ingest", str(SAMPLES), "--db", file_db)
    lake_stats, lake_records = stored(db)
    file_stats, file_records = stored(file_db)
    assert lake_stats == file_stats
    assert lake_records == file_records

    assert run("db", "current", "--db", db).strip() == run("db", "current", "--db", file_db).strip()
    assert "at version" in run("db", "upgrade", "--db", db)
    for command in (["query", "claims"], ["query", "citations"], ["query", "impact"]):
        assert run(*command, "--db", db, "--format", "jsonl") == run(*command, "--db", file_db, "--format", "jsonl")
    assert run("audit", "--db", db, "--format", "json", code=None) == run(
        "audit", "--db", file_db, "--format", "json", code=None
    )
    task = json.loads(
        run(
            "sql",
            "SELECT task_id FROM results WHERE task_id IS NOT NULL ORDER BY 1 LIMIT 1",
            "--db",
            db,
            "--format",
            "jsonl",
        )
    )["task_id"]
    assert run("show", task, "--db", db) == run("show", task, "--db", file_db)
    assert run("export", "--raw", "--db", db) == run("export", "--raw", "--db", file_db)
    run("export", "--format", "parquet", str(tmp_path / "pq"), "--db", db)
    assert (tmp_path / "pq" / "claims.parquet").exists()
    assert run("stats", "--db", db, "--json") == run("stats", "--db", file_db, "--json")
    refused = run("sql", "DELETE FROM records", "--db", db, code=2)
    assert "read-only SELECT" in refused


# One kind: the migrations are DuckLake statements whatever the catalog; test_every_command_on_a_lake runs them on
# each kind (`db current`, `db upgrade`).
@on("sqlite")
def test_migrations_are_recorded_in_the_lake(lake):
    db, data = lake
    with Archive.open(db, data_path=data) as archive:
        assert archive.version() == max(
            m.version for m in __import__("archiver.store.migrations", fromlist=["available"]).available()
        )
        tables = {
            name
            for (name,) in archive.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
            ).fetchall()
        }
        assert {"schema_migrations", "records", "claim_citations"} <= tables
        assert (
            archive.con.execute(
                "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
            ).fetchone()[0]
            == "ducklake"
        )


def test_a_missing_lake_is_reported_not_created(tmp_path):
    out = run("stats", "--db", f"ducklake:sqlite:{tmp_path / 'none.sqlite'}", code=1)
    assert "no archive here" in out
    assert not (tmp_path / "none.sqlite").exists()


def test_a_duckdb_file_catalog_admits_one_process_and_says_so(tmp_path):
    db = f"ducklake:{tmp_path / 'one.ducklake'}"
    Archive.open(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nfrom archiver.archive import Archive\n"
                f"a = Archive.open({db!r})\nprint('open', flush=True)\ntime.sleep(30)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        out = run("stats", "--db", db, "--wait", "0.5", code=1)
        assert f"process {holder.pid}" in out
        assert "one process at a time" in out
        assert "ducklake:postgres" in out
    finally:
        holder.kill()
        holder.wait()


def test_missing_wheels_name_the_extra(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("duckdb_extension_") else real(name, *a)
    )
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path / "empty-extension-dir"))
    out = run("ingest", str(SAMPLES), "--db", f"ducklake:sqlite:{tmp_path / 'c.sqlite'}", code=1)
    assert "pip install 'a2a-archiver[lake]'" in out


# One kind: the transfer copies tables through DuckLake whatever the catalog (nothing in it asks which);
# test_walk_through_from_one_file_to_a_postgres_lake transfers into a PostgreSQL lake.
@on("sqlite")
def test_transfer_round_trip_file_lake_file(lake, tmp_path):
    db, data = lake
    first = str(tmp_path / "first.duckdb")
    run("ingest", str(SAMPLES), "--db", first)
    out = run("db", "transfer", "--db", first, "--to", db, "--to-data-path", data)
    assert "transferred into" in out
    back = str(tmp_path / "back.duckdb")
    run("db", "transfer", "--db", db, "--to", back)
    first_stats, first_records = stored(first)
    for other in (db, back):
        stats, records = stored(other)
        assert stats == first_stats
        assert records == first_records
        assert {sha for sha, *_ in records} == {sha for sha, *_ in first_records}
    # a second transfer into a non-empty archive is refused, naming what it holds (the command's earlier
    # name, `db copy`, still works)
    held = first_stats["sources"]
    refused = run("db", "copy", "--db", first, "--to", back, code=1)
    assert f"the target holds {held} source file versions already; transfer into a new archive" in refused
    # and the lake goes on ingesting: nothing is new
    summary = json.loads(run("ingest", str(SAMPLES), "--db", db, "--json"))
    assert summary["files_unchanged"] == summary["files"]


def test_walk_through_from_one_file_to_a_postgres_lake(postgres, tmp_path, monkeypatch):
    """The commands of the README's "When one machine is not enough", in order."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLES, tmp_path / "sample_transcripts")
    dsn = postgres()
    lake = f"ducklake:postgres:{dsn}"
    run("ingest", "sample_transcripts/")  # 1. one file, as today
    out = run("db", "transfer", "--to", lake, "--to-data-path", "lake-data/")  # 2. move it into a lake
    assert "transferred into" in out
    monkeypatch.setenv("ARCHIVER_DB", lake)  # 3. point every command at it
    assert json.loads(run("stats", "--json"))["sources"] == stored("archive.duckdb")[0]["sources"]
    writers = [start_writer(lake, "lake-data/", [tmp_path / "sample_transcripts"]) for _ in range(2)]  # 4. many writers
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert json.loads(out)["files_unchanged"] == json.loads(out)["files"]
    assert run("query", "claims", "--study", "Versant*", "--format", "jsonl")  # 5. every command, unchanged
    run("export", "--format", "parquet", "parquet-out/")  # 6. for engines without DuckLake
    assert (tmp_path / "parquet-out" / "claim_citations").is_dir()
    assert list((tmp_path / "lake-data").rglob("*.parquet"))  # the lake's own Parquet files


# Every kind: each catalog has its own scanner to load as the lake opens (SQLite's, PostgreSQL's, none for a DuckDB
# file), and none may load later.
@on(*EVERY_CATALOG)
def test_lake_connections_are_offline_and_locked(lake):
    """DuckLake and its catalog's scanner load while the lake opens; then no extension loads by itself."""
    db, data = lake
    with Archive.open(db, data_path=data) as archive:
        assert_offline_and_locked(archive.con)
