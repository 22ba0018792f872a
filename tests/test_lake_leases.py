"""Leases on a lake that admits several writers: taken, refused, taken over from writers that are gone or
silent, settled after a stopped writer, and `db check` and `db cleanup` of what writers left (the fixtures:
`tests/lakes.py`)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.store.leases import _SQLite
from tests.lakes import ROOT, SHARED_CATALOGS, catalog_leases, on, one_file, run
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed: pip install '.[lake]'")

pytestmark = [pytest.mark.lake, pytest.mark.usefixtures("lake_environment")]


def start_holder(db: str, data: str, path: Path, sha: str, seconds: float) -> subprocess.Popen:
    """Another writer process that leases `path` and holds it for `seconds`, then ends without releasing it
    (as a killed writer would)."""
    code = (
        "import os, sys, time\nfrom archiver.archive import Archive\nfrom archiver.store.leases import leases_for\n"
        f"a = Archive.open({db!r}, data_path={data!r})\nleases = leases_for(a.location)\n"
        f"assert leases.take({str(path)!r}, {sha!r}) is None\nprint('held', flush=True)\n"
        f"time.sleep({seconds})\nos._exit(0)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=os.environ.copy()
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def _leases(db: str, data: str | None = None):
    from archiver.store.leases import leases_for

    archive = Archive.open(db, data_path=data)
    return archive, leases_for(archive.location)


# Both kinds that admit several writers: each keeps its leases in its own store (a SQLite file beside the catalog, a
# table in the PostgreSQL catalog), and this test takes, refuses and takes over a lease in each.
@on(*SHARED_CATALOGS)
def test_a_lease_of_a_live_writer_is_taken_over_after_the_lease(lake, tmp_path, monkeypatch):
    from archiver.store.leases import leases_for

    db, data = lake
    path = tmp_path / "in" / "one.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(jsonrpc_result({"task": v1_task("t-dead", v1_cited_parts())})) + "\n")
    sha = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    with Archive.open(db, data_path=data) as archive:
        silent = leases_for(archive.location)
        assert silent.take(str(path), sha) is None  # a writer that leases, then hangs (its process lives on)
        live = leases_for(archive.location)
        holder = live.take(str(path), sha)
        assert holder is not None
        assert holder.writer == silent.writer
        assert not holder.committed
        summary = archive.ingest([str(path)])
        assert summary.claimed_elsewhere
        assert summary.records == 0
        assert len(summary.not_stored) == 1
        assert summary.not_stored[0].startswith(f"{path}: being ingested by writer {silent.writer} (leased ")
        monkeypatch.setenv("ARCHIVER_LEASE_SECONDS", "0")
        summary = archive.ingest([str(path)])
        assert summary.claimed_elsewhere == []
        assert summary.records == 1
        assert summary.leases_taken_over
        assert silent.writer in summary.leases_taken_over[0]
        assert not silent.confirm(sha)  # the silent writer, were it only slow, would now drop the file
        assert archive.stats()["sources"] == 1


# One kind: this is the leases' policy (store/leases.py), the same SQL on either store;
# test_a_lease_of_a_live_writer_is_taken_over_after_the_lease goes through both.
@on("sqlite")
def test_a_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(lake, tmp_path):
    db, data = lake
    path, sha = one_file(tmp_path)
    holder = start_holder(db, data, path, sha, 0)
    holder.wait(timeout=60)
    with Archive.open(db, data_path=data) as archive:
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert summary.not_stored == []
    assert summary.claimed_elsewhere == []
    assert len(summary.leases_taken_over) == 1
    assert "whose process has ended" in summary.leases_taken_over[0]
    assert f":{holder.pid}:" in summary.leases_taken_over[0]


# One kind: this is the leases' policy (store/leases.py), the same SQL on either store;
# test_a_lease_of_a_live_writer_is_taken_over_after_the_lease goes through both.
@on("sqlite")
def test_a_reused_pid_is_not_taken_for_the_writer_that_held_the_lease(lake, tmp_path):
    db, data = lake
    path, sha = one_file(tmp_path)
    archive, earlier = _leases(db, data)
    with archive:
        earlier.started = "another-boot:1"  # a writer that had this very pid before it was reused (by us)
        assert earlier.take(str(path), sha) is None
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert "whose process has ended" in summary.leases_taken_over[0]


# One kind: this is the leases' policy (store/leases.py), the same SQL on either store;
# test_a_lease_of_a_live_writer_is_taken_over_after_the_lease goes through both.
@on("sqlite")
def test_a_lease_of_another_host_waits_for_the_lease_even_if_its_pid_is_free_here(lake, tmp_path, monkeypatch):
    db, data = lake
    path, sha = one_file(tmp_path)
    archive, remote = _leases(db, data)
    with archive:
        remote.host, remote.pid = "another-host", 4_000_000  # no such pid here: it names a process over there
        assert remote.take(str(path), sha) is None
        summary = archive.ingest([str(path)])
        assert summary.records == 0
        assert len(summary.not_stored) == 1
        monkeypatch.setenv("ARCHIVER_LEASE_SECONDS", "0")
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert "silent for" in summary.leases_taken_over[0]


# One kind: this is the leases' policy (store/leases.py), the same SQL on either store;
# test_a_lease_of_a_live_writer_is_taken_over_after_the_lease goes through both.
@on("sqlite")
def test_leases_are_keyed_on_content_not_path(lake, tmp_path):
    db, data = lake
    first, sha = one_file(tmp_path, "mount-a.jsonl")
    second, same = one_file(tmp_path, "mount-b.jsonl")
    assert sha == same
    archive, one = _leases(db, data)
    with archive:
        assert one.take(str(first), sha) is None
        other = _leases(db, data)[1]
        holder = other.take(str(second), sha)
        assert holder is not None
        assert holder.writer == one.writer
        assert holder.path == str(first)


# One kind: waiting for writers is the ingest's policy over the leases, whatever their store.
@on("sqlite")
def test_files_held_by_a_live_writer_fail_the_run_unless_it_waits_for_writers(lake, tmp_path):
    db, data = lake
    path, sha = one_file(tmp_path)
    holder = start_holder(db, data, path, sha, 8)
    try:
        result = CliRunner().invoke(main, ["ingest", str(path), "--db", db])
        assert result.exit_code == 1, result.output
        assert f"not stored: {path}: being ingested by writer " in result.output
        assert "use --wait-for-writers" in result.output
        waited = CliRunner().invoke(main, ["ingest", str(path), "--db", db, "--wait-for-writers", "--json"])
        assert waited.exit_code == 0, waited.output
        assert holder.poll() is not None  # it waited for the holder to die, then took the file over
    finally:
        holder.kill()
        holder.wait()
    summary = json.loads(waited.stdout)
    assert summary["records"] == 1
    assert summary["not_stored"] == []
    assert len(summary["leases_taken_over"]) == 1


# One kind: this is the leases' policy (store/leases.py), the same SQL on either store;
# test_a_lease_of_a_live_writer_is_taken_over_after_the_lease goes through both.
@on("sqlite")
def test_leases_a_writer_left_held_after_its_commit_are_settled_by_the_next_run(lake, tmp_path):
    """A writer stopped between its commit and marking its leases (it marks them after the commit, file by
    file) leaves leases held on contents the lake holds: the next run over those files marks them
    committed, so `db check` finds nothing, and a later writer of the same bytes makes an alias."""
    db, data = lake
    path, sha = one_file(tmp_path)
    run("ingest", str(path), "--db", db, "--data-path", data)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leases = catalog_leases(db)  # the lease as that writer left it: its own, not yet marked committed
    leases.runner.execute(
        f"UPDATE archiver_leases SET writer = 'gone', pid = {int(ended.stdout)}, committed_at = NULL "
        f"WHERE sha256 = '{sha}'"
    )
    assert [holder.sha256 for holder in leases.held()] == [sha]
    leases.close()
    assert (
        "problem: held-lease: 1 file leases not committed"
        in CliRunner().invoke(main, ["db", "check", "--db", db]).output
    )
    again = json.loads(run("ingest", str(path), "--db", db, "--data-path", data, "--json"))
    assert again["files_unchanged"] == 1
    leases = catalog_leases(db)
    assert leases.held() == []
    leases.close()
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 0, checked.output


# Both kinds: `db check` reads the leases from each store, and finds the Parquet files the catalog does not list on a
# connection of its own where the lake's is read-only (store/lake.py).
@on(*SHARED_CATALOGS)
def test_db_check_names_held_leases_and_unlisted_files_and_cleanup_removes_them(lake, tmp_path):
    db, data = lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    path, sha = one_file(tmp_path)
    start_holder(db, data, path, sha, 0).wait(timeout=60)  # a writer that died holding a lease
    parquet = min(Path(data).rglob("*.parquet"))
    stray = parquet.with_name("ducklake-stray.parquet")
    shutil.copy(parquet, stray)  # as a commit that never finished leaves its files
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 1
    assert "problem: held-lease: 1 file leases not committed" in checked.output
    assert f"{path}: writer " in checked.output
    assert "its process has ended" in checked.output
    assert "problem: orphan-file: 1 Parquet files under the data path that the catalog does not list" in checked.output
    assert str(stray) in checked.output
    cleaned = run("db", "cleanup", "--db", db)
    assert f"released lease: {path}: writer " in cleaned
    assert f"deleted: {stray}" in cleaned
    assert not stray.exists()
    assert parquet.exists()
    assert run("db", "check", "--db", db).startswith("ok: ")


def test_a_lease_file_turned_to_wal_while_another_writer_holds_it_waits_for_that_writer(tmp_path):
    """Turning a SQLite file to WAL takes its exclusive lock without SQLite's busy handler: a writer holding
    the file's write lock at that moment (as four writers creating one new lake do) refused the others at
    once, whatever their timeout. The lease file's opener waits until that writer is done."""
    path = str(tmp_path / "catalog.sqlite.leases")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE held (x)")
    other.execute("BEGIN")
    other.execute("INSERT INTO held VALUES (1)")  # the file's write lock, held
    done = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    done.start()
    try:
        runner = _SQLite(path)
    finally:
        done.join()
    assert runner.query("PRAGMA journal_mode") == [("wal",)]
    runner.setup()
    runner.close()
    other.close()
