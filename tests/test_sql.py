"""archiver sql: read-only SELECTs in every output format; anything else refused, clearly."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.query.readonly import NotReadOnlyError
from archiver.store.backend import spill_folder

from .lineage_data import build


@pytest.fixture
def db(archive, write, tmp_path):
    archive.ingest(build(write), workers=1)
    archive.close()
    return str(tmp_path / "archive.duckdb")


@pytest.mark.slow
def test_select_in_every_format(db):
    sql = "SELECT study, count(*) AS n FROM claim_citations WHERE study LIKE 'Versant%' GROUP BY 1 ORDER BY 1"
    out = CliRunner().invoke(main, ["sql", sql, "--format", "json", "--db", db])
    assert json.loads(out.output) == [{"study": "Versant Mega Tracker", "n": 4}]
    out = CliRunner().invoke(main, ["sql", sql, "--format", "csv", "--db", db])
    assert list(csv.DictReader(io.StringIO(out.output))) == [{"study": "Versant Mega Tracker", "n": "4"}]
    out = CliRunner().invoke(
        main, ["sql", "FROM citation_index SELECT study ORDER BY study LIMIT 1", "--format", "jsonl", "--db", db]
    )
    assert json.loads(out.output) == {"study": "<script>alert(1)</script>"}


@pytest.mark.slow
def test_named_parameters_and_markdown(db):
    sql = "SELECT study, count(*) AS n FROM claim_citations WHERE study LIKE $like GROUP BY 1 HAVING n >= $least"
    args = ["sql", sql, "-p", "like=Versant%", "--param", "least=4", "--format", "markdown", "--db", db]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    assert out.output == "| study | n |\n| --- | --- |\n| Versant Mega Tracker | 4 |\n"
    out = CliRunner().invoke(main, ["sql", "SELECT $a || '|' || chr(10) AS x", "-p", "a=b", "--md", "--db", db])
    assert out.output == "| x |\n| --- |\n| b\\|<br> |\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["SELECT $x, $y"], "no value given for $x, $y: give each as -p NAME=VALUE"),
        (["SELECT $x", "-p", "x=1", "-p", "y=2"], "no $y in the statement"),
        (["SELECT 1", "-p", "x"], "expected NAME=VALUE"),
        (["SELECT 1", "-p", "1x=2"], "expected NAME=VALUE"),
    ],
)
def test_parameters_misgiven_are_usage_errors(db, args, said):
    out = CliRunner().invoke(main, ["sql", *args, "--db", db])
    assert out.exit_code == 2, out.output
    assert said in out.output


@pytest.mark.slow
@pytest.mark.parametrize(
    ("statement", "reason"),
    [
        ("INSERT INTO sources (path, sha256) VALUES ('a', 'b')", "inserts rows"),
        ("UPDATE results SET kind = 'x'", "updates rows"),
        ("DELETE FROM claims", "deletes rows"),
        ("DROP VIEW claim_citations", "drops something"),
        ("CREATE TABLE t AS SELECT 1", "creates something"),
        ("ALTER TABLE claims ADD COLUMN x INT", "alters the schema"),
        ("ATTACH 'other.duckdb' AS other", "attaches a database"),
        ("DETACH other", "detaches a database"),
        ("COPY claims TO 'out.csv'", "copies data in or out"),
        ("COPY (SELECT 1) TO 'out.parquet' (FORMAT parquet)", "copies data in or out"),
        ("EXPORT DATABASE 'dump'", "exports the database"),
        ("INSTALL httpfs", "installs or loads an extension"),
        ("LOAD httpfs", "installs or loads an extension"),
        ("SET threads = 1", "changes a setting"),
        ("RESET threads", "changes a setting"),
        ("USE memory", "changes a setting"),
        ("CHECKPOINT", "calls a procedure"),
        ("BEGIN TRANSACTION", "controls a transaction"),
        ("VACUUM", "vacuums"),
        ("EXPLAIN ANALYZE DELETE FROM claims", "deletes rows"),
        ("SELECT 1; DELETE FROM claims", "exactly one statement"),
        ("SELEC 1", "cannot parse"),
    ],
)
def test_refused(db, statement, reason):
    result = CliRunner().invoke(main, ["sql", statement, "--db", db])
    assert result.exit_code == 2, result.output
    assert reason in result.output, result.output
    with Archive.open(db, read_only=True) as archive, pytest.raises(NotReadOnlyError, match=reason):
        archive.sql(statement)


@pytest.mark.slow
def test_refusal_leaves_archive_intact(archive, write):
    archive.ingest(build(write), workers=1)
    with pytest.raises(NotReadOnlyError):
        archive.sql("DELETE FROM claims")
    assert archive.stats()["claims"] == 9
    assert list(archive.sql("EXPLAIN SELECT count(*) FROM claims"))
    assert list(archive.sql("SELECT count(*) AS n FROM claims WHERE literal = ?", ["5"])) == [{"n": 1}]


# --- the allow-list: every function and table a statement reaches (issue 26) -----------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("SELECT * FROM checkpoint()", "the table function checkpoint()"),
        ("SELECT * FROM force_checkpoint()", "the table function force_checkpoint()"),
        ("SELECT * FROM query('DELETE FROM claims')", "the table function query()"),
        ("SELECT * FROM read_duckdb('other.duckdb')", "the table function read_duckdb()"),
        ("SELECT * FROM (SELECT 1) t, LATERAL (SELECT * FROM checkpoint())", "the table function checkpoint()"),
        ("SELECT * FROM duckdb_settings()", "the table function duckdb_settings()"),
        ("SELECT nextval('claims_seq')", "calls nextval()"),
        ("SELECT json_serialize_plan('SELECT * FROM checkpoint()')", "calls json_serialize_plan()"),
        ("SELECT count(*) FROM claims WHERE pointer IN (SELECT setseed(0.5))", "calls setseed()"),
        ("SELECT postgres_query('x')", "calls postgres_query()"),
        ("EXPLAIN ANALYZE SELECT * FROM checkpoint()", "the table function checkpoint()"),
        ("SELECT * FROM 'other.parquet'", "reads other.parquet, which is not a table or view of the archive"),
        ("SELECT * FROM system.main.duckdb_settings", "reads system.main.duckdb_settings"),
        ("WITH c AS (SELECT 1) SELECT * FROM c, temp.main.t", "reads temp.main.t"),
        ("SHOW TABLES FROM information_schema", "shows the archive's own tables only, not information_schema"),
    ],
)
def test_only_what_is_allowed_reaches_duckdb(db, statement, named):
    """Functions and tables are allowed by name, from DuckDB's parse tree: the rest is refused in one line,
    exit 2, whatever the statement's kind, and the archive is byte for byte as it was."""
    before = Path(db).read_bytes()
    result = CliRunner().invoke(main, ["sql", statement, "--db", db])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: refused: ")
    assert named in result.output
    assert result.output.count("\n") == 1
    assert Path(db).read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("statement", "rows"),
    [
        ("WITH n AS (SELECT count(*) AS n FROM claims) SELECT n FROM n", [{"n": 9}]),
        ("SELECT count(*) AS n FROM main.claims", [{"n": 9}]),
        ("SELECT count(DISTINCT name) AS n FROM (SHOW TABLES) WHERE name IN ('claims', 'claim_citations')", [{"n": 2}]),
        ("SELECT column_name FROM (DESCRIBE claims) WHERE column_name = 'pointer'", [{"column_name": "pointer"}]),
        ("SELECT count(*) > 0 AS some FROM (SUMMARIZE claims)", [{"some": True}]),
        ("SELECT name FROM pragma_table_info('claims') WHERE name = 'literal'", [{"name": "literal"}]),
        ("SELECT max(r) AS r FROM (SELECT row_number() OVER (ORDER BY pointer) AS r FROM claims)", [{"r": 9}]),
        ("SELECT list_transform([1, 2], x -> x + 1) AS l, upper('a') AS u", [{"l": [2, 3], "u": "A"}]),
        ("SELECT sum(range)::INT AS s FROM range(4)", [{"s": 6}]),
        ("SELECT unnest([1, 2]) AS u ORDER BY u", [{"u": 1}, {"u": 2}]),
    ],
)
def test_reading_queries_still_answer(db, statement, rows):
    result = CliRunner().invoke(main, ["sql", statement, "--format", "json", "--db", db])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == rows


# --- issue 39: text that is not UTF-8, bounds on memory and time, Ctrl-C -----------------------------------

ROOT = Path(__file__).resolve().parent.parent
ENDLESS = "SELECT count(*) FROM range(1000000000000)"


def test_a_statement_that_is_not_utf8_is_a_usage_error(tmp_path):
    """Bytes that are not UTF-8 reach click as lone surrogates, which DuckDB's parser cannot take (a TypeError
    with a traceback before): the statement, or a parameter's value, is refused in one line, exit 2."""
    db = str(tmp_path / "a.duckdb")
    Archive.open(db).close()
    statement = os.fsdecode(b"SELECT \xff")
    result = subprocess.run(
        [sys.executable, "-m", "archiver", "sql", statement, "--db", db], capture_output=True, cwd=ROOT
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == b"Error: the statement is not UTF-8 text (byte 0xff at 7): give it in UTF-8\n"
    value = os.fsdecode(b"x=\xfe")
    result = subprocess.run(
        [sys.executable, "-m", "archiver", "sql", "SELECT $x AS x", "-p", value, "--db", db],
        capture_output=True,
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == b"Error: the value of $x is not UTF-8 text (byte 0xfe at 0): give it in UTF-8\n"


def test_a_statement_past_the_timeout_is_stopped(tmp_path):
    db = str(tmp_path / "a.duckdb")
    Archive.open(db).close()
    started = time.monotonic()
    result = CliRunner().invoke(main, ["sql", ENDLESS, "--timeout", "1", "--db", db])
    assert time.monotonic() - started < 10
    assert result.exit_code == 1, result.output
    assert result.output == (
        "Error: the statement ran longer than 1 s and was stopped: narrow it, or give a larger --timeout\n"
    )


def test_a_statement_past_the_memory_bound_is_stopped(tmp_path):
    """DuckDB's memory limit was the machine's (18.8 GiB here): `list(range(1e9))` passed 3 GiB."""
    db = str(tmp_path / "a.duckdb")
    Archive.open(db).close()
    statement = "SELECT len(list(range)) AS n FROM range(1000000000)"
    result = CliRunner().invoke(main, ["sql", statement, "--max-memory", "64MiB", "--db", db])
    assert result.exit_code == 1, result.output
    assert result.output == (
        "Error: the statement needs more than 64 MiB of memory and 256 MiB on disk: narrow it, "
        "or give a larger --max-memory\n"
    )
    result = CliRunner().invoke(main, ["sql", "SELECT 1 AS one", "--max-memory", "lots", "--db", db])
    assert result.exit_code == 2
    assert "'lots' is not a size" in result.output


def test_the_bounds_are_set_and_the_spill_goes_to_a_folder_of_the_process(tmp_path):
    db = str(tmp_path / "a.duckdb")
    Archive.open(db).close()
    statement = (
        "SELECT current_setting('memory_limit') AS memory, current_setting('max_temp_directory_size') AS spill, "
        "current_setting('temp_directory') AS folder"
    )
    with Archive.open(db, read_only=True) as archive, archive.bounded(512 * 1024**2):
        (row,) = archive.sql(statement)
    assert row["memory"] == "512.0 MiB"
    assert row["spill"] == "2.0 GiB"
    assert row["folder"] == spill_folder()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_running_statement_within_a_second(tmp_path, signum):
    """`SELECT count(*) FROM range(1e12)` ran for ever through two SIGINTs: DuckDB checks for no signal while
    it runs a query. A SIGINT (or SIGTERM) now interrupts it: exit 130 (143), one line, within a second."""
    db = str(tmp_path / "a.duckdb")
    Archive.open(db).close()
    process = subprocess.Popen(
        [sys.executable, "-m", "archiver", "sql", ENDLESS, "--db", db],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        time.sleep(4)  # started, and the query running
        assert process.poll() is None
        sent = time.monotonic()
        process.send_signal(signum)
        _out, err = process.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 128 + signum
    assert err.decode() == f"interrupted by {signal.Signals(signum).name}\n"
    assert took < 3  # a second, and the process's exit, with room for a loaded machine (the statement never ends)
