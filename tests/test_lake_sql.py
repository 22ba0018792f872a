"""`archiver sql` and every reader on a lake: read-only and offline (issue 26), a catalog role that may only
select, views planted in the catalog and a damaged lake refused (issue 39) (the fixtures: `tests/lakes.py`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.store.backend import locate
from tests import servers
from tests.lakes import EVERY_CATALOG, ROOT, on, run
from tests.transcripts import SAMPLES

pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed: pip install '.[lake]'")

pytestmark = [pytest.mark.lake, pytest.mark.usefixtures("lake_environment")]


def _data_files(data: str) -> list[str]:
    return sorted(str(path) for path in Path(data).rglob("*") if path.is_file())


def _sql(db: str, statement: str) -> subprocess.CompletedProcess:
    """`archiver sql` in a process of its own: a statement that crashes DuckDB must not take the tests along."""
    return subprocess.run(
        [sys.executable, "-m", "archiver", "sql", statement, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def _refused(db: str, statement: str, named: str, in_process: bool = True) -> None:
    if in_process:
        result = CliRunner().invoke(main, ["sql", statement, "--db", db])
        code, output = result.exit_code, result.output
    else:
        done = _sql(db, statement)
        code, output = done.returncode, done.stderr
    assert code == 2, (statement, output)
    assert output.startswith("Error: refused: "), (statement, output)
    assert output.count("\n") == 1, (statement, output)
    assert named in output, (statement, output)


# Every kind: the escapes reach each catalog's own database (its checkpoints, DuckLake's maintenance, the PostgreSQL
# and SQLite scanners' functions on the catalog), attached differently by each kind.
@on(*EVERY_CATALOG)
def test_sql_on_a_lake_writes_nothing_and_connects_nowhere(lake, tmp_path):
    """The escapes tried on lakes: checkpoints and flushes that wrote Parquet files (then `db check` found
    orphans), an option that crashed the process, and scans that opened connections to any host or ran
    statements on the catalog's server. Each is refused in one line, the data path's files as they were."""
    db, data = lake
    run("ingest", str(SAMPLES / "versant-insights"), "--db", db, "--data-path", data)
    with Archive.open(db, read_only=True) as archive:  # DuckLake's name for the catalog database it attaches
        metadata = "__ducklake_metadata_" + archive.con.execute("SELECT current_database()").fetchone()[0]
    quoted, literal = metadata.replace('"', '""'), metadata.replace("'", "''")
    files = _data_files(data)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    escapes = [
        ("SELECT * FROM checkpoint()", "the table function checkpoint()"),
        ("SELECT * FROM force_checkpoint()", "the table function force_checkpoint()"),
        ("SELECT * FROM ducklake_flush_inlined_data(current_database())", "ducklake_flush_inlined_data()"),
        ("SELECT * FROM ducklake_merge_adjacent_files(current_database())", "ducklake_merge_adjacent_files()"),
        (
            "SELECT * FROM ducklake_expire_snapshots(current_database(), older_than => now())",
            "ducklake_expire_snapshots()",
        ),
        (f"SELECT * FROM postgres_scan('host=127.0.0.1 port={port} dbname=x', 'public', 't')", "postgres_scan()"),
        (f"SELECT * FROM postgres_query('{literal}', 'SELECT pg_read_file(''PG_VERSION'')')", "postgres_query()"),
        (f"SELECT * FROM postgres_execute('{literal}', 'CREATE TABLE x (y int)')", "postgres_execute()"),
        (f"SELECT * FROM mysql_query('{literal}', 'SELECT 1')", "mysql_query()"),
        (f"SELECT * FROM read_duckdb('{tmp_path / 'other.duckdb'}')", "read_duckdb()"),
        (f'SELECT * FROM "{quoted}".ducklake_snapshot', f"reads {metadata}.ducklake_snapshot, which is not a table"),
    ]
    for statement, named in escapes:
        _refused(db, statement, named)
    option = "SELECT * FROM ducklake_set_option(current_database(), 'data_inlining_row_limit', 10)"
    _refused(db, option, "ducklake_set_option()", in_process=False)  # crashed the process (SIGSEGV) before
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody tried to connect
    listener.close()
    assert _data_files(data) == files
    assert run("db", "check", "--db", db).startswith("ok: ")
    rows = json.loads(run("sql", "SELECT count(*) AS n FROM claims", "--db", db, "--format", "json"))
    assert rows == [{"n": 38}]
    shown = json.loads(run("sql", "SHOW TABLES", "--db", db, "--format", "json"))
    assert {"name": "claims"} in shown


def _psql(dsn: str, *statements: str) -> None:
    settings = dict(part.split("=", 1) for part in dsn.split())
    psql = servers.pg_bin() / "psql"
    for statement in statements:
        subprocess.run(
            [
                str(psql),
                "-h",
                settings["host"],
                "-p",
                settings["port"],
                "-U",
                "postgres",
                "-d",
                settings["dbname"],
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ],
            check=True,
            capture_output=True,
        )


def test_sql_answers_with_a_catalog_role_that_may_only_select(postgres, tmp_path):
    """The least privilege docs/lakes.md names for readers: a PostgreSQL role with SELECT on the catalog's
    tables, nothing else (no superuser, so no pg_read_file either way)."""
    dsn = postgres()
    data = str(tmp_path / "lake-data")
    run("ingest", str(SAMPLES / "versant-insights"), "--db", f"ducklake:postgres:{dsn}", "--data-path", data)
    _psql(
        dsn,
        "DROP ROLE IF EXISTS lake_reader",
        "CREATE ROLE lake_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
        "GRANT USAGE ON SCHEMA public TO lake_reader",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO lake_reader",
    )
    reader = "ducklake:postgres:" + dsn.replace("user=postgres", "user=lake_reader")
    rows = json.loads(run("sql", "SELECT count(*) AS n FROM claims", "--db", reader, "--format", "json"))
    assert rows == [{"n": 38}]
    assert json.loads(run("stats", "--db", reader, "--json"))["claims"] == 38
    check = CliRunner().invoke(main, ["db", "check", "--db", reader])
    assert check.exit_code == 1
    assert check.output.count("\n") == 1
    assert "`db check` needs the catalog role of a writer" in check.output


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it is sent."""

    def __init__(self) -> None:
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.sock.close()


def plant_in_catalog(db: str, view: str, sql: str) -> None:
    """Replace the SQL the lake's catalog stores for `view`, as anyone who may write the catalog can."""
    location = locate(db)
    update = "UPDATE ducklake_view SET sql = {} WHERE view_name = '{}' AND end_snapshot IS NULL"
    if location.catalog == "sqlite":
        import sqlite3

        with sqlite3.connect(location.catalog_path) as con:
            con.execute(update.format("?", view), [sql])
    elif location.catalog == "duckdb":
        import duckdb

        with duckdb.connect(location.catalog_path) as con:
            con.execute(update.format("?", view), [sql])
    else:
        psql = [str(servers.pg_bin() / "psql"), location.catalog_path, "-v", "ON_ERROR_STOP=1", "-c"]
        subprocess.run([*psql, update.format("$planted$" + sql + "$planted$", view)], check=True, capture_output=True)


# Every kind: the view's SQL is planted in each catalog's own database (plant_in_catalog), from which each kind reads
# its views.
@on(*EVERY_CATALOG)
def test_a_view_planted_in_the_catalog_binds_nothing(lake, tmp_path):
    """Issue 39, 1: a view whose SQL was replaced in the catalog sends no reader anywhere, reads no file, and
    `db check` names it; on every kind of catalog."""
    db, data = lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    secret = tmp_path / "secret.txt"
    secret.write_text("the-planted-view-read-this-file\n")
    listener = Listener()
    try:
        scan = f"SELECT * FROM postgres_scan('host=127.0.0.1 port={listener.port} dbname=x user=x', 'public', 'x')"
        plant_in_catalog(db, "origin_copies", scan)
        plant_in_catalog(db, "quarantine", f"SELECT content AS reason FROM read_text('{secret}')")
        assert run("sql", "SELECT count(*) AS n FROM origin_copies", "--db", db, "--format", "csv") == "n\n0\n"
        assert "the-planted" not in run("sql", "SELECT reason FROM quarantine", "--db", db)
        assert "claims" in run("stats", "--db", db)
        time.sleep(0.3)
        assert listener.connections == 0
        for listing in (
            "SELECT * FROM duckdb_columns()",
            "SHOW ALL TABLES",
            "DESCRIBE origin_copies",
            "SELECT * FROM information_schema.columns",
            "SELECT * FROM lake.main.origin_copies",
        ):
            out = run("sql", listing, "--db", db, code=None)
            assert ("Traceback" in out, "the-planted" in out) == (False, False), listing
            time.sleep(0.3)
            assert listener.connections == 0, (listing, out)
        run("audit", "--fail-on", "never", "--db", db)
        out = run("db", "check", "--db", db, code=1)
        assert "origin_copies: a view whose SQL is not the archiver's" in out
        assert "quarantine: a view whose SQL is not the archiver's" in out
        time.sleep(0.3)
        assert listener.connections == 0
    finally:
        listener.close()


# A catalog file (SQLite; a DuckDB file's is read the same way) and a PostgreSQL catalog, which has no file whose
# state the trust check could remember (store/trust.py, identity): each takes its own path.
@on("sqlite", "postgres")
def test_a_damaged_lake_is_refused_in_one_line(lake, tmp_path):
    """Issue 39, 5: a lake whose table was dropped, or that defines a macro of its own, is refused in one line;
    `db check` lists it."""
    db, data = lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    with Archive.open(db) as archive:
        archive.con.execute("CREATE MACRO lower(x) AS 'planted'")
    for command in (["stats"], ["query", "claims"], ["audit"], ["db", "repair"]):
        result = CliRunner().invoke(main, [*command, "--db", db])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.output.count("\n") == 1, result.output
        assert "a macro lower() of its own" in result.output
    assert "a macro lower() of its own" in run("db", "check", "--db", db, code=1)
