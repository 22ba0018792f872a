"""A lake's SQLite catalog that another writer keeps locked past SQLite's own wait, met by a statement of an
ingest under way, ends the ingest with one line and loses nothing. Seen with four writers creating one lake
at once on a loaded machine: DuckLake's read of its latest snapshot failed ("database is locked") and each
writer ended in a traceback. The race is not made here at will, so the statement fails as it did then."""

from __future__ import annotations

import duckdb
import pytest
from click.testing import CliRunner

import archiver.ingest.run
from archiver.archive import Archive
from archiver.cli import main
from tests.transcripts import jsonrpc_result, v1_cited_parts, v1_task

pytestmark = [pytest.mark.lake, pytest.mark.usefixtures("lake_environment")]

SEEN = (
    'Failed to query most recent snapshot for DuckLake: Failed to prepare query "SELECT type FROM sqlite_master '
    "WHERE lower(name)=lower('ducklake_snapshot');\": database is locked"
)


def test_a_catalog_locked_past_sqlites_wait_is_one_line_and_loses_nothing(tmp_path, write, monkeypatch):
    db = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}"
    first = write("first.jsonl", [jsonrpc_result({"task": v1_task("first", v1_cited_parts())})])
    second = write("second.jsonl", [jsonrpc_result({"task": v1_task("second", v1_cited_parts())})])
    assert CliRunner().invoke(main, ["ingest", first, "--db", db]).exit_code == 0
    read_schemas = archiver.ingest.run.arrow_schemas

    def locked(con):
        raise duckdb.Error(SEEN)

    monkeypatch.setattr(archiver.ingest.run, "arrow_schemas", locked)
    refused = CliRunner().invoke(main, ["ingest", second, "--db", db])
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"Error: {db}: the lake's SQLite catalog stayed locked by another writer; what was committed stays: "
        "run the same command again (a PostgreSQL catalog serves many writers at once)\n"
    )
    monkeypatch.setattr(archiver.ingest.run, "arrow_schemas", read_schemas)
    again = CliRunner().invoke(main, ["ingest", first, second, "--db", db])
    assert again.exit_code == 0, again.output
    with Archive.open(db, read_only=True) as archive:
        assert archive.stats()["sources"] == 2
