"""Several writers on one lake: concurrent ingests store each file once, writers creating one new lake at
once, and a rerun after an ingest stopped between commits (the fixtures: `tests/lakes.py`)."""

from __future__ import annotations

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
from archiver.audit import kept as audit_kept
from archiver.cli import main
from archiver.store import kept
from tests.lakes import ROOT, SHARED_CATALOGS, catalog_leases, on, one_file, run, start_writer, stored
from tests.test_counts_kept import counts_exact
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed: pip install '.[lake]'")

pytestmark = [pytest.mark.lake, pytest.mark.usefixtures("lake_environment")]


def _corpus(root: Path, folders: int = 6, files: int = 6) -> list[Path]:
    """Folders of distinct transcripts (each file its own tasks), with an agent card each."""
    made = []
    for f in range(folders):
        folder = root / f"batch{f}"
        folder.mkdir(parents=True)
        card = json.loads((SAMPLES / "versant-insights" / "agent-card.json").read_text())
        (folder / "agent-card.json").write_text(json.dumps({**card, "name": f"Agent {f}"}))
        for n in range(files):
            lines = [
                json.dumps(
                    jsonrpc_result(
                        {"task": v1_task(f"t-{f}-{n}-{k}", v1_cited_parts({"share": 0.1 * k, "n": 100 + k}))}, rpc_id=k
                    )
                )
                for k in range(20)
            ]
            (folder / f"log{n}.jsonl").write_text("\n".join(lines) + "\n")
        made.append(folder)
    return made


# Both kinds that admit several writers: SQLite serialises the writers' commits by its file lock, PostgreSQL by its
# transactions; on each, every file must be stored once.
@on(*SHARED_CATALOGS)
def test_concurrent_writers_store_each_file_once(lake, tmp_path):
    db, data = lake
    batches = _corpus(tmp_path / "in")
    Archive.open(db, data_path=data).close()
    plans = [batches[0:4], batches[2:6], [batches[5], batches[1], batches[3], batches[0]]]
    started = time.monotonic()
    writers = [start_writer(db, data, plan) for plan in plans]
    outputs = [w.communicate(timeout=300) for w in writers]
    elapsed = time.monotonic() - started
    for writer, (_out, err) in zip(writers, outputs, strict=False):
        assert writer.returncode == 0, err
    summaries = [json.loads(out) for out, _err in outputs]
    files = sum(len(plan) for plan in plans) * 7
    # A writer stores a file unless another holds its lease, or committed it before this one reached it
    # (a writer that starts late finds it unchanged).
    stored_files = sum(s["files"] - len(s["claimed_elsewhere"]) - s["files_unchanged"] for s in summaries)
    assert sum(s["files"] for s in summaries) == files
    assert stored_files == 6 * 7, summaries  # each file by exactly one writer
    single = str(tmp_path / "single.duckdb")
    run("ingest", *map(str, batches), "--db", single)
    lake_stats, lake_records = stored(db)
    single_stats, single_records = stored(single)
    assert lake_stats == single_stats
    assert lake_records == single_records
    with Archive.open(db, read_only=True) as archive:
        assert archive.con.execute("SELECT count(*) - count(DISTINCT (path, sha256)) FROM sources").fetchone()[0] == 0
        assert archive.con.execute("SELECT count(*) - count(DISTINCT record_id) FROM records").fetchone()[0] == 0
        # the kept tables, maintained by three writers at once, are their definitions (issue 40)
        assert archive.con.execute(kept.differing()).fetchall() == []
        assert audit_kept.differing(archive.con) == []
        counts_exact(archive.con)
    audit = ("audit", "--format", "json", "--fail-on", "never", "--db")
    assert json.loads(run(*audit, db)) == json.loads(run(*audit, single))
    print(
        f"\n3 writers, {files} listed files, {stored_files} stored in {elapsed:.1f}s; "
        f"commit retries {[s['commit_retries'] for s in summaries]}"
    )


def _lake_ingest(db: str, data: str, paths: list[Path]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            (  # one file per chunk and per commit group, so a kill lands between commits
                "import archiver.ingest.run as r, archiver.ingest.pipeline as p; r.GROUP_RECORDS = p.CHUNK_FILES = 1; "
                "from archiver.cli import main; main(prog_name='archiver')"
            ),
            "ingest",
            *map(str, paths),
            "--db",
            db,
            "--data-path",
            data,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        start_new_session=True,
    )


def _wait_for_commits(db: str, process: subprocess.Popen, count: int) -> None:
    leases = catalog_leases(db)
    deadline = time.monotonic() + 120
    while len(leases.runner.query("SELECT sha256 FROM archiver_leases WHERE committed_at IS NOT NULL")) < count:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, process.communicate()[1]
        time.sleep(0.02)
    leases.close()


# SIGKILL on both kinds that admit several writers: a commit killed halfway is undone by each catalog's own
# transactions. SIGTERM on one: the ingest's own stop, which releases its leases by the same policy on either store.
@pytest.mark.parametrize(
    ("lake", "signum"),
    [("sqlite", signal.SIGKILL), ("postgres", signal.SIGKILL), ("sqlite", signal.SIGTERM)],
    ids=["sqlite-SIGKILL", "postgres-SIGKILL", "sqlite-SIGTERM"],
    indirect=["lake"],
)
def test_a_rerun_after_a_stopped_lake_ingest_stores_every_file(lake, tmp_path, signum):
    db, data = lake
    batches = _corpus(tmp_path / "in")
    Archive.open(db, data_path=data).close()
    first = _lake_ingest(db, data, batches)
    _wait_for_commits(db, first, 1)
    first.send_signal(signum)
    _out, err = first.communicate(timeout=60)
    assert first.returncode == (-signum if signum == signal.SIGKILL else 143), err
    leases = catalog_leases(db)
    held = leases.held()
    leases.close()
    if signum == signal.SIGTERM:
        assert held == [], "an ingest stopped by SIGTERM releases its leases"
        assert err.startswith("interrupted by SIGTERM: committed "), err
        assert err.count("\n") == 1, err
    rerun = CliRunner().invoke(main, ["ingest", *map(str, batches), "--db", db, "--json"])
    assert rerun.exit_code == 0, rerun.output
    summary = json.loads(rerun.stdout)
    assert summary["not_stored"] == []
    assert summary["claimed_elsewhere"] == []
    assert stored(db)[0]["sources"] == 6 * 7
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    if checked.exit_code and signum == signal.SIGKILL:  # a commit killed halfway leaves its Parquet files only
        assert all(
            line.startswith(("problem: orphan-file: ", "1 integrity problems")) for line in checked.output.splitlines()
        ), checked.output
        run("db", "cleanup", "--db", db)
        checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 0, checked.output


# Both kinds: the writers race to make the new lake's tables through each catalog's own locks (SQLite's file lock,
# PostgreSQL's transactions).
@on(*SHARED_CATALOGS)
def test_four_writers_creating_one_new_lake_at_once_all_succeed(lake, tmp_path):
    db, data = lake
    paths = [one_file(tmp_path, f"w{n}.jsonl", f"t-create-{n}")[0] for n in range(4)]
    starter = tmp_path / "go"
    code = (
        "import os, sys, time\nfrom archiver.cli import main\n"
        f"while not os.path.exists({str(starter)!r}): time.sleep(0.005)\n"
        "main(sys.argv[1:], prog_name='archiver')"
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", code, "ingest", str(path), "--db", db, "--data-path", data, "--wait", "60"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for path in paths
    ]
    time.sleep(1.5)  # every interpreter up and waiting
    starter.touch()
    outputs = [writer.communicate(timeout=300) for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0, 0], [err for _out, err in outputs]
    assert stored(db)[0]["sources"] == 4
    assert run("db", "check", "--db", db).startswith("ok: ")
