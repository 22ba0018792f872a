"""The Java SDK's samples (sample_transcripts/java-meridian/) are what the official Java SDK makes, and the archiver
reads everything a Java user stores: its wire captures, its client objects, and its JPA task store's table, live
and as an export.

The module plays the generator's scenario once (make_samples_java.py: Maven builds MakeSamples against the pinned
SDK, which runs the SDK's server, JPA store and clients) against a throwaway PostgreSQL and MariaDB, into a
temporary folder, and keeps the servers for the live reads. Set MAVEN_REPO_LOCAL to use another Maven repository.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from tests import servers
from tests.transcripts import SAMPLES, rows

GENERATOR = SAMPLES / "generate" / "java" / "make_samples_java.py"
FOLDER = "java-meridian"
FINALIZED = re.compile(rb'"finalized_at": ?("[^"]*"|null)')
"""The one column the JPA store stamps with the wall clock (`Instant.now()` when a task turns final)."""


def _generator():
    spec = importlib.util.spec_from_file_location("make_samples_java", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def java():
    for tool in ("java", "javac", "mvn", "psql", "mariadb"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (.ci/run installs Java 17, Maven, PostgreSQL and MariaDB)")
    servers.skip_without("postgres")
    servers.skip_without("mariadb")
    return _generator()


@pytest.fixture(scope="module")
def made(java, tmp_path_factory):
    """The generator's output folder, and its PostgreSQL and MariaDB servers with the tables the JPA store wrote."""
    out = tmp_path_factory.mktemp("java-samples")
    with java.stores() as (pg, mariadb):
        java.make(pg, mariadb, out)
        yield out, pg, mariadb


def _committed() -> list[Path]:
    return sorted((SAMPLES / FOLDER).iterdir())


@pytest.mark.slow
def test_the_generator_makes_the_committed_files_byte_for_byte(made):
    out, _, _ = made
    assert sorted(p.name for p in (out / FOLDER).iterdir()) == [p.name for p in _committed()]
    for committed in _committed():
        fresh = (out / FOLDER / committed.name).read_bytes()
        if committed.name.startswith("a2a-tasks-"):
            assert _finalized(fresh) == _finalized(committed.read_bytes())
            fresh, expected = FINALIZED.sub(b"", fresh), FINALIZED.sub(b"", committed.read_bytes())
        else:
            expected = committed.read_bytes()
        assert fresh == expected, committed.name


def _finalized(dump: bytes) -> list[tuple[str, bool]]:
    """Each row's task and whether the store stamped it finalized: exactly the rows whose task is completed."""
    found = []
    for line in dump.splitlines():
        row = orjson.loads(line)
        found.append((row["task_id"], row["finalized_at"] is not None))
        assert (row["finalized_at"] is not None) == (row["state"] == "TASK_STATE_COMPLETED")
    return found


@pytest.mark.slow
def test_the_manifest_holds_the_generators_fragment(java):
    manifest = orjson.loads((SAMPLES / "manifest.json").read_bytes())
    fragment = java.fragment()
    mine = [f for f in manifest["files"] if f["path"].startswith(f"{FOLDER}/")]
    assert mine == sorted(fragment.files, key=lambda f: f["path"])
    assert [p for p in manifest["planted"] if p["path"].startswith(f"{FOLDER}/")] == fragment.planted
    assert [r for r in manifest["results"] if r["key"] in fragment.results] == sorted(
        fragment.results.values(), key=lambda r: r["key"]
    )
    assert [a for a in manifest["agents"] if a["card"].startswith(f"{FOLDER}/")] == fragment.agents


def _ingest(db: Path, *sources: str, code: int = 0) -> dict:
    result = CliRunner().invoke(main, ["ingest", "--db", str(db), "--json", *sources], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_nothing_the_java_sdk_made_is_quarantined(made, tmp_path):
    out, _, _ = made
    summary = _ingest(tmp_path / "a.duckdb", str(out / FOLDER))
    assert (summary["files"], summary["quarantined"], summary["results"]) == (9, 0, 8)
    with Archive.open(str(tmp_path / "a.duckdb"), read_only=True) as archive:
        assert rows(archive, "SELECT count(*) FROM records WHERE yields = 'nothing'") == [(0,)]


def _tasks(db: Path, source: str) -> list[tuple]:
    """Each task a source holds: its state, citations (valid or not) and claims."""
    with Archive.open(str(db), read_only=True) as archive:
        return rows(
            archive,
            """SELECT r.task_id, r.state,
                      (SELECT count(*) FROM citations c WHERE c.copy_id = r.copy_id),
                      (SELECT count(*) FROM claims m WHERE m.copy_id = r.copy_id)
               FROM results r WHERE r.source_path LIKE ? ORDER BY r.task_id""",
            [source],
        )


@pytest.mark.slow
@pytest.mark.store
@pytest.mark.parametrize(
    ("kind", "dump"), [("postgresql", "a2a-tasks-postgresql.jsonl"), ("mysql", "a2a-tasks-mariadb.jsonl")]
)
def test_the_jpa_table_reads_live_as_its_export_reads(made, kind, dump, tmp_path):
    pytest.importorskip("pymysql" if kind == "mysql" else "duckdb_extension_postgres", reason="no stores extra")
    out, pg, mariadb = made
    user, server = ("postgres", pg) if kind == "postgresql" else ("root", mariadb)
    url = f"{kind}://{user}@127.0.0.1:{server.port}/agents"
    live, export = tmp_path / "live.duckdb", tmp_path / "export.duckdb"
    summary = _ingest(live, url)
    assert (summary["files"], summary["quarantined"]) == (1, 0)
    assert _ingest(export, str(out / FOLDER / dump))["quarantined"] == 0
    tasks = _tasks(live, f"{url}#a2a_tasks")
    assert tasks == _tasks(export, f"%/{dump}")
    assert len(tasks) == len((out / FOLDER / dump).read_bytes().splitlines())
    with Archive.open(str(live), read_only=True) as archive:
        locators = [
            locator
            for (locator,) in rows(archive, "SELECT locator FROM records WHERE source_path = ?", [url + "#a2a_tasks"])
        ]
    assert sorted(locators) == [f"a2a_tasks task_id={task_id}" for task_id, *_ in tasks]


@pytest.mark.slow
def test_a_java_store_row_is_read_from_its_task_data_and_a_broken_one_is_quarantined(tmp_path):
    """Rows as the JPA store's export holds them (no Java needed): the committed PostgreSQL export, and two rows
    whose task_data is not a task."""
    rows_file = tmp_path / "a2a-tasks.jsonl"
    broken = [
        {"task_id": "t-list", "context_id": "c", "state": "TASK_STATE_COMPLETED", "task_data": "[1]"},
        {"task_id": "t-cut", "context_id": "c", "state": "TASK_STATE_COMPLETED", "task_data": '{"task": {"id"'},
    ]
    committed = (SAMPLES / FOLDER / "a2a-tasks-postgresql.jsonl").read_bytes()
    rows_file.write_bytes(committed + b"".join(orjson.dumps(row) + b"\n" for row in broken))
    summary = _ingest(tmp_path / "a.duckdb", str(rows_file), code=1)  # 1: something was quarantined
    assert (summary["records"], summary["quarantined"], summary["tasks"]) == (8, 2, 6)
    with Archive.open(str(tmp_path / "a.duckdb"), read_only=True) as archive:
        reasons = rows(archive, "SELECT locator, reason FROM records WHERE status = 'quarantined' ORDER BY locator")
    assert [locator for locator, _ in reasons] == ["line 7", "line 8"]
    assert reasons[0][1].endswith("task-store column task_data is not a JSON object")
    assert "task-store column task_data is not JSON" in reasons[1][1]
