"""The progress line as a terminal shows it (issue 28): `archiver ingest` runs in a pseudo-terminal of 60
and 100 columns, its output is played through a terminal emulator (pyte), and the screen holds one line
of it at the end. Before, a line wider than the terminal wrapped, and each redraw cleared only its last
row: 105 `ingesting:` lines were left in one ingest at 100 columns.

Issue 41: on 64 MB in two files, the line said "100% ... 0 of 2 files read" with "ETA 0:00:01" for 10 s
while the rows were built and committed, and, on Ctrl-C, "ingested: 59.9 MB" then "committed 0 files".
It now says what is done (building rows, committing and the step, closing the archive), gives a time left
only from the speed the commits wrote at, and leaves one statement of what was committed when stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archiver import progress
from archiver.progress import Progress
from benchmarks.generate import generate
from tests.terminal import ROOT, in_terminal

pyte = pytest.importorskip("pyte", reason="the test extra's pyte is not installed")

MB = 1_000_000


@pytest.fixture
def clock(monkeypatch):
    """The progress's clock, moved by the test: `clock.now`."""

    class Clock:
        now = 1000.0

    monkeypatch.setattr(progress.time, "monotonic", lambda: Clock.now)
    return Clock


def test_the_line_says_what_is_done_and_no_time_left_until_a_commit_has_ended(clock):
    line = Progress(enabled=False)
    reading = [(40 * MB, 75_000)]  # what the preparing threads have read of files not handed over yet
    line.planned(2, 64 * MB, lambda: reading[0])
    clock.now += 2
    assert line.parts()[:3] == [
        "ingesting: 40.0 MB of 64.0 MB read (62%)",
        "0 of 2 files stored",
        "75,000 records read",
    ]
    reading[0] = (64 * MB, 120_000)
    assert line.parts()[:2] == ["ingesting: 64.0 MB read, building the rows of 2 files", "0 of 2 files stored"]
    assert not [part for part in line.parts() if part.endswith(" left")], "all read, nothing written: unknown"
    reading[0] = (0, 0)
    line.read("/in/a.jsonl", 32 * MB, 60_000)
    line.read("/in/b.jsonl", 32 * MB, 60_000)
    assert line.parts()[0] == "ingesting: 64.0 MB of 64.0 MB read (100%)"
    line.committing(1, 32 * MB)
    line.writing("writing claims")
    assert line.parts()[0] == "committing 1 file (32.0 MB): writing claims"
    clock.now += 8
    line.committed(1, 32 * MB)
    line.committing(1, 32 * MB)
    assert line.parts()[:2] == ["committing 1 file (32.0 MB): beginning", "1 of 2 files stored"]
    assert "0:00:08 left" in line.parts(), "32 MB left to write at the 4 MB/s the first commit wrote"
    clock.now += 5
    assert "0:00:03 left" in line.parts()
    clock.now += 4
    assert not [part for part in line.parts() if part.endswith(" left")], "past the estimate: unknown, not 0"
    line.committed(1, 32 * MB)
    line.finishing("closing the archive")
    assert line.parts()[:2] == ["finishing: closing the archive", "2 of 2 files stored"]
    assert line.done() == "ingested: 64.0 MB in 0:00:19 (3.4 MB/s)"


def test_only_what_was_committed_is_said_ingested(clock):
    line = Progress(enabled=False)
    line.planned(3, 90 * MB)
    line.read("/in/a.jsonl", 30 * MB, 10)
    line.read("/in/b.jsonl", 30 * MB, 10)
    assert line.parts()[0] == "ingesting: 60.0 MB of 90.0 MB read (67%)"
    line.committing(2, 60 * MB)
    clock.now += 10
    assert line.done() == "ingested: 0 B in 0:00:10 (0 B/s)"
    line.committed(2, 60 * MB)
    assert line.done() == "ingested: 60.0 MB in 0:00:10 (6.0 MB/s)"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 3000, seed=5)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("columns", [60, 100])
def test_the_progress_line_is_redrawn_in_place_and_leaves_one_line(corpus, tmp_path, columns):
    args = ["ingest", str(corpus), "--db", str(tmp_path / "a.duckdb"), "--workers", "1"]
    written, lines = in_terminal(args, columns)
    assert written.count(b"ingesting: ") >= 1, "the progress line was drawn while the ingest ran"
    assert not [line for line in lines if "ingesting" in line], lines
    [done] = [line for line in lines if line.startswith("ingested: ")]
    assert len(done) < columns
    assert all(len(line) <= columns for line in lines)


STOPPED = re.compile(
    r"^interrupted by SIGINT: committed (\d+) of (\d+) files \(\d+ new records\) before stopping"
    r"(; (\d+) not stored \(run the same command again to finish\))?$"
)


@pytest.mark.slow
def test_ctrl_c_leaves_one_statement_of_what_was_committed(tmp_path):
    """Stopped while it reads, the run leaves no "ingested: N MB" of bytes it never stored: the progress line
    is taken away, and one line says what was committed of the files planned and what was not."""
    import fcntl
    import struct
    import termios

    generate(tmp_path / "in", 20000, seed=5)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    args = ["ingest", str(tmp_path / "in"), "--db", str(tmp_path / "a.duckdb"), "--workers", "1"]
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "archiver", *args]
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env)
    os.close(slave)
    written = bytearray()
    try:
        while not re.search(rb"ingesting: [1-9][0-9.]* [kM]B of", written):
            written += os.read(master, 65536)
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            written += chunk
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    assert process.wait(timeout=60) == 130
    screen = pyte.Screen(200, 50)
    pyte.ByteStream(screen).feed(bytes(written))
    lines = [line.rstrip() for line in screen.display if line.strip()]
    assert not [line for line in lines if line.startswith(("ingested", "ingesting", "committing"))], lines
    [said] = lines
    stopped = STOPPED.match(said)
    assert stopped, said
    committed, planned = int(stopped.group(1)), int(stopped.group(2))
    assert planned == 40
    assert committed < planned
    assert int(stopped.group(4)) == planned - committed
