"""Ctrl-C, SIGTERM and SIGKILL of a real `archiver ingest` that parses in preparing threads.

Each ingest runs in its own session, so any process it started is found by session id in /proc even after
it loses its parent: there should be none left.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.workers import THREAD_NAME
from benchmarks.generate import generate

ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 2.0
COMMITTED = re.compile(
    r"^interrupted by (SIGINT|SIGTERM): committed (\d+)(?: of \d+)? files? \((\d+) new records\) before "
    r"stopping(; \d+ not stored \(run the same command again to finish\))?$"
)


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """About 23 MB in 40 files: enough input for preparing threads and several commit groups."""
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 20000, seed=5)
    return out


def session(leader: int) -> list[tuple[int, str]]:
    """(pid, state) of the live processes of the session `leader` started; zombies are dead already."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[3]) == leader and fields[0] not in (b"Z", b"X"):
            found.append((int(name), fields[0].decode()))
    return found


def start_ingest(corpus: Path, db: Path, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    err = tmp_path / "stderr.txt"
    process = subprocess.Popen(
        [sys.executable, "-m", "archiver", "ingest", str(corpus), "--db", str(db), "--workers", "2", *extra],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=err.open("w"),
    )
    return process, err


def preparing(pid: int) -> int:
    """How many preparing threads the process runs."""
    found = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with suppress(OSError):
            found += (task / "comm").read_text().strip() == THREAD_NAME[:15]
    return found


def wait_for_workers(process: subprocess.Popen, count: int = 2) -> None:
    """Until at least two preparing threads run beside the ingest's main thread."""
    deadline = time.monotonic() + 60
    while preparing(process.pid) < count:
        assert process.poll() is None, "the ingest never started its workers"
        assert time.monotonic() < deadline, "the ingest never started its workers"
        time.sleep(0.05)


def assert_all_gone(leader: int, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while session(leader) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = session(leader)
    for pid, _state in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"processes of the ingest outlived it by {within}s: {left}"


def check(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "archiver", "db", "check", "--db", str(db)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def wait_for_a_commit(process: subprocess.Popen, db: Path) -> None:
    """Until the first commit group is in the WAL: the writer is busy with the next ones."""
    wal = Path(f"{db}.wal")
    deadline = time.monotonic() + 120
    while not (wal.exists() and wal.stat().st_size > 0):
        assert process.poll() is None, "the ingest never committed"
        assert time.monotonic() < deadline, "the ingest never committed"
        time.sleep(0.01)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("moment", ["preparing", "committing"])
def test_a_signal_stops_the_ingest_within_two_seconds_saying_what_it_committed(corpus, tmp_path, signum, moment):
    db = tmp_path / "a.duckdb"
    process, err = start_ingest(corpus, db, tmp_path)
    wait_for_workers(process)
    if moment == "committing":
        wait_for_a_commit(process, db)
    else:
        time.sleep(0.3)
    sent = time.monotonic()
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)  # as a terminal's Ctrl-C does: the whole foreground group
    else:
        os.kill(process.pid, signum)  # as `kill` or a service manager does: the ingest alone
    assert process.wait(timeout=30) == 128 + signum, err.read_text()
    elapsed = time.monotonic() - sent
    assert elapsed < STOP_SECONDS, f"stopped {elapsed:.2f}s after {signum.name}"
    lines = err.read_text().splitlines()
    assert len(lines) == 1, "\n".join(lines)
    said = COMMITTED.match(lines[0])
    assert said, lines
    assert said.group(1) == signum.name, lines
    assert_all_gone(process.pid)
    if int(said.group(2)) == 0:  # an ingest that stored nothing leaves no archive it created
        assert not db.exists()
        return
    assert check(db).returncode == 0, check(db).stderr
    with Archive.open(str(db), read_only=True) as archive:
        files, records = archive.con.execute("SELECT count(*), coalesce(sum(records), 0) FROM sources").fetchone()
    assert (files, records) == (int(said.group(2)), int(said.group(3))), "the line says what the archive holds"


def test_a_second_ctrl_c_exits_at_once(corpus, tmp_path):
    db = tmp_path / "a.duckdb"
    process, err = start_ingest(corpus, db, tmp_path)
    wait_for_workers(process)
    time.sleep(1.0)
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(0.02)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    # 130 from the handler, or death by SIGINT itself once Python has reset its handlers on the way out:
    # a shell reports both as 130
    assert process.wait(timeout=30) in (130, -signal.SIGINT), err.read_text()
    assert time.monotonic() - sent < STOP_SECONDS
    assert "Traceback" not in err.read_text()
    assert_all_gone(process.pid)
    assert not db.exists() or check(db).returncode == 0  # an archive the run created and left empty is removed


def test_a_killed_ingest_leaves_nothing_running_and_the_rerun_finishes(corpus, tmp_path):
    db = tmp_path / "a.duckdb"
    process, _err = start_ingest(corpus, db, tmp_path)
    wait_for_workers(process)
    time.sleep(1.0)
    os.kill(process.pid, signal.SIGKILL)  # the ingest alone
    assert process.wait(timeout=30) == -signal.SIGKILL
    assert_all_gone(process.pid)
    assert check(db).returncode == 0
    rerun = subprocess.run(
        [sys.executable, "-m", "archiver", "ingest", str(corpus), "--db", str(db), "--json"],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    with Archive.open(str(db), read_only=True) as archive:
        assert archive.stats()["sources"] == 40
