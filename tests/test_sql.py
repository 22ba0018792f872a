"""archiver sql: read-only SELECTs in every output format; anything else refused, clearly."""

from __future__ import annotations

import csv
import io
import json

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


def test_refusal_leaves_archive_intact(archive, write):
    archive.ingest(build(write), workers=1)
    with pytest.raises(NotReadOnlyError):
        archive.sql("DELETE FROM claims")
    assert archive.stats()["claims"] == 9
    assert list(archive.sql("EXPLAIN SELECT count(*) FROM claims"))
    assert list(archive.sql("SELECT count(*) AS n FROM claims WHERE literal = ?", ["5"])) == [{"n": 1}]
