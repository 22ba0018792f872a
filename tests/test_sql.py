"""archiver sql: read-only SELECTs in every output format; anything else refused, clearly."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.query.readonly import NotReadOnlyError

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
