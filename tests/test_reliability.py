"""Integrity check, crash safety (SIGKILL at random moments) and concurrent use of one archive.

The crash loop has a short version here; the long one (24 kills, a larger corpus that uses parsing
workers) runs with:  ARCHIVER_LONG_TESTS=1 pytest tests/test_reliability.py
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from benchmarks.generate import generate
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task

LONG = os.environ.get("ARCHIVER_LONG_TESTS") == "1"
ROOT = Path(__file__).resolve().parent.parent
# `archiver ingest` as a process, each file in its own transaction (GROUP_RECORDS=1) so that kills land
# between commits as well as inside them; otherwise the CLI exactly as users run it.
INGEST = [
    sys.executable,
    "-c",
    ("import archiver.ingest.run as r; r.GROUP_RECORDS = 1; from archiver.cli import main; main(prog_name='archiver')"),
    "ingest",
]


def archiver(*args: str, wait: bool = True, **kwargs) -> subprocess.Popen | subprocess.CompletedProcess:
    command = [sys.executable, "-m", "archiver", *args]
    if wait:
        return subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT, timeout=300)
    return subprocess.Popen(command, cwd=ROOT, **kwargs)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 4000 if LONG else 1500, seed=11)
    return out


def snapshot(db: str) -> tuple[dict, list, list]:
    """Counts, source versions and the stored bytes (as SHA-256) of an archive; not what opens healed."""
    with Archive.open(db, read_only=True) as archive:
        sources = rows(archive, "SELECT path, sha256, records, quarantined FROM sources ORDER BY ALL")
        records = rows(archive, "SELECT source_path, seq, sha256, status FROM records ORDER BY ALL")
        counts = archive.stats()
        counts.pop("healed_rows")
        return counts, sources, records


@pytest.fixture(scope="module")
def uninterrupted(corpus, tmp_path_factory) -> tuple[tuple, float]:
    db = str(tmp_path_factory.mktemp("baseline") / "archive.duckdb")
    started = time.monotonic()
    done = subprocess.run([*INGEST, str(corpus), "--db", db], check=False, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return snapshot(db), time.monotonic() - started


# --- archiver db check -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_db_check_passes_on_a_clean_archive_and_names_every_kind_of_damage(tmp_path, write):
    db = str(tmp_path / "a.duckdb")
    files = [write(f"f{i}.jsonl", [jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())})]) for i in range(3)]
    with Archive.open(db) as archive:
        archive.ingest(files)
        assert archive.check() == []
    ok = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("ok: 3 sources, 3 records"), ok.output
    with Archive.open(db) as archive:
        con = archive.con
        con.execute("DELETE FROM records WHERE source_path = ?", [files[0]])  # index rows lose their raw record
        con.execute("INSERT INTO records SELECT * FROM records WHERE source_path = ?", [files[1]])  # twice
        con.execute("DELETE FROM sources WHERE path = ?", [files[2]])  # a half-ingested file
        con.execute("DELETE FROM parts WHERE is_citation AND source_path = ?", [files[1]])
        con.execute("UPDATE records SET raw = 'tampered'::BLOB WHERE source_path = ?", [files[1]])
        names = sorted(problem.check for problem in archive.check())
    assert names == [
        "citation-part",
        "duplicate-record",
        "kept-counts",  # the Parts deleted behind the writer's back are no longer what the counts kept
        "missing-records",
        "record-bytes",
        "result-records",
        "uncommitted-citations",
        "uncommitted-claims",
        "uncommitted-parts",
        "uncommitted-records",
        "uncommitted-results",
    ]
    damaged = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert damaged.exit_code == 1
    assert (
        f"problem: uncommitted-records: 1 records rows of file versions no committed ingest recorded: "
        f"{files[2]}: 1 rows" in damaged.stderr
    )
    assert damaged.stderr.rstrip().endswith("11 integrity problems")


# --- crash safety ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing_and_duplicates_nothing(corpus, uninterrupted, tmp_path):
    (expected, duration) = uninterrupted
    rng = random.Random(int(os.environ.get("ARCHIVER_CRASH_SEED", "6")))
    runs = 24 if LONG else 4
    for run in range(runs):
        db = str(tmp_path / f"run{run}.duckdb")
        for _kill in range(rng.randint(1, 3) if LONG else 1):  # kill it, and sometimes its re-runs too
            process = subprocess.Popen(
                [*INGEST, str(corpus), "--db", db],
                cwd=ROOT,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(rng.uniform(0.1, duration))
            os.killpg(process.pid, signal.SIGKILL)  # the ingest and any parsing workers it started
            process.wait()
        if os.path.exists(db):
            check = archiver("db", "check", "--db", db)
            assert check.returncode == 0, f"run {run}: {check.stderr}"
        finish = subprocess.run(
            [*INGEST, str(corpus), "--db", db], check=False, capture_output=True, text=True, cwd=ROOT
        )
        assert finish.returncode == 0, finish.stderr
        assert snapshot(db) == expected, f"run {run} differs from an uninterrupted ingest"
        assert archiver("db", "check", "--db", db).returncode == 0


def wide_corpus(folder: Path, files: int, tasks: int) -> Path:
    """Files whose commit groups append more claims than a DuckDB row group holds (122,880): large appends
    that DuckDB writes to the database file before COMMIT, the case its WAL replay has been seen to tear."""
    numbers = {f"cell{i}": i / 7 for i in range(60)}
    for index in range(files):
        with open(folder / f"wide{index}.jsonl", "wb") as handle:
            for task_id in range(tasks):
                task = v1_task(f"w{index}-{task_id}", v1_cited_parts(data=numbers))
                handle.write(orjson.dumps(jsonrpc_result({"task": task})) + b"\n")
    return folder


@pytest.mark.slow
def test_sigkill_during_large_commits_leaves_no_row_of_an_uncommitted_version(tmp_path):
    """Kills land anywhere in an ingest of large commit groups; each killed archive, once opened, holds only
    committed versions (the open heals a torn replay), and finishing the ingest gives the uninterrupted
    archive. The long run (ARCHIVER_LONG_TESTS=1) kills 24 times."""
    (tmp_path / "wide").mkdir()
    corpus = wide_corpus(tmp_path / "wide", files=3, tasks=7000 if LONG else 2500)
    command = [sys.executable, "-m", "archiver", "ingest", str(corpus), "--workers", "1"]
    whole = str(tmp_path / "whole.duckdb")
    started = time.monotonic()
    assert subprocess.run([*command, "--db", whole], cwd=ROOT, capture_output=True, check=False).returncode == 0
    duration = time.monotonic() - started
    expected = snapshot(whole)
    rng = random.Random(int(os.environ.get("ARCHIVER_CRASH_SEED", "7")))
    healed = 0
    for run in range(24 if LONG else 2):
        db = str(tmp_path / f"run{run}.duckdb")
        process = subprocess.Popen(
            [*command, "--db", db],
            cwd=ROOT,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, duration))
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if os.path.exists(db):
            check = archiver("db", "check", "--db", db)
            assert check.returncode == 0, f"run {run}: {check.stderr}"
            healed += check.stderr.count("healed:")  # a torn replay seen, and healed
        finish = subprocess.run([*command, "--db", db], cwd=ROOT, capture_output=True, text=True, check=False)
        assert finish.returncode == 0, finish.stderr
        assert snapshot(db) == expected, f"run {run} differs from an uninterrupted ingest"
    print(f"{healed} tables' rows of uncommitted versions healed over the kills")


# --- concurrency -------------------------------------------------------------------------------------------


def wait_until_locked(db: str, process: subprocess.Popen) -> None:
    """Return once another process holds the archive's write lock (DuckDB refuses even readers then)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            duckdb.connect(db, read_only=True).close()
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                return
        time.sleep(0.02)
    pytest.fail("the ingest never held the archive")


def halves(corpus: Path, tmp_path: Path) -> tuple[Path, Path]:
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.name not in ("truth.json", ".archiverignore"))
    first, second = tmp_path / "first", tmp_path / "second"
    for index, path in enumerate(files):
        target = (first if index % 2 == 0 else second) / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return first, second


@pytest.mark.slow
def test_two_ingests_started_together_both_complete_with_correct_totals(corpus, tmp_path):
    first, second = halves(corpus, tmp_path)
    together = str(tmp_path / "together.duckdb")
    Archive.open(together).close()
    ingests = [
        archiver(
            "ingest",
            str(part),
            "--db",
            together,
            "--wait",
            "120",
            "--json",
            wait=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for part in (first, second)
    ]
    outputs = [process.communicate(timeout=300) for process in ingests]
    assert [process.returncode for process in ingests] == [0, 0], outputs
    one_after_the_other = str(tmp_path / "sequential.duckdb")
    with Archive.open(one_after_the_other) as archive:
        archive.ingest([str(first)])
        archive.ingest([str(second)])
    assert snapshot(together)[0] == snapshot(one_after_the_other)[0]
    assert archiver("db", "check", "--db", together).returncode == 0


@pytest.mark.slow
def test_reads_during_an_ingest_wait_and_answer_or_say_the_archive_is_busy(corpus, uninterrupted, tmp_path):
    db = str(tmp_path / "busy.duckdb")
    Archive.open(db).close()
    ingest = subprocess.Popen(
        [*INGEST, str(corpus), "--db", db], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_until_locked(db, ingest)
    commands = [
        (*command, "--db", db, "--wait", "0")
        for command in (("stats",), ("query", "claims", "--limit", "1"), ("audit",), ("db", "check"))
    ]
    commands.append(("stats", "--json", "--db", db, "--wait", "120"))
    started = [
        archiver(*command, wait=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in commands
    ]  # all at once, while the ingest holds the archive
    outputs = [process.communicate(timeout=300) for process in started]
    finished = [
        subprocess.CompletedProcess(p.args, p.returncode, *out) for p, out in zip(started, outputs, strict=False)
    ]
    *impatient, patient = finished
    assert ingest.wait(timeout=300) == 0
    if ingest.returncode == 0 and any(result.returncode == 0 for result in impatient):
        pytest.skip("the ingest ended before the readers started (a very fast machine)")
    for result in impatient:
        assert result.returncode == 1
        assert (
            f"the archive is busy: process {ingest.pid} holds it; waited 0s (use --wait to wait longer)"
            in result.stderr
        ), result.stderr
    assert patient.returncode == 0, patient.stderr
    import json

    counts = json.loads(patient.stdout)
    assert {k: v for k, v in counts.items() if k not in ("healed_rows", "validly_cited")} == uninterrupted[0][0]
    assert archiver("db", "check", "--db", db).returncode == 0
