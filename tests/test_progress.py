"""The progress line as a terminal shows it (issue 28): `archiver ingest` runs in a pseudo-terminal of 60
and 100 columns, its output is played through a terminal emulator (pyte), and the screen holds one line
of it at the end. Before, a line wider than the terminal wrapped, and each redraw cleared only its last
row: 105 `ingesting:` lines were left in one ingest at 100 columns."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from benchmarks.generate import generate

pyte = pytest.importorskip("pyte", reason="the test extra's pyte is not installed")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ROWS = 200


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 3000, seed=5)
    return out


def in_terminal(args: list[str], columns: int) -> tuple[bytes, list[str]]:
    """What `archiver ARGS` wrote to a terminal `columns` wide, and the screen's lines at the end."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "archiver", *args]
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env)
    os.close(slave)
    written = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every end of the terminal closed
            break
        if not chunk:
            break
        written += chunk
    os.close(master)
    assert process.wait(timeout=600) in (0, 1), written[-2000:]
    screen = pyte.Screen(columns, ROWS)
    pyte.ByteStream(screen).feed(bytes(written))
    return bytes(written), [line.rstrip() for line in screen.display if line.strip()]


@pytest.mark.parametrize("columns", [60, 100])
def test_the_progress_line_is_redrawn_in_place_and_leaves_one_line(corpus, tmp_path, columns):
    args = ["ingest", str(corpus), "--db", str(tmp_path / "a.duckdb"), "--workers", "1"]
    written, lines = in_terminal(args, columns)
    assert written.count(b"ingesting: ") >= 1, "the progress line was drawn while the ingest ran"
    assert not [line for line in lines if "ingesting" in line], lines
    [done] = [line for line in lines if line.startswith("ingested: ")]
    assert len(done) < columns
    assert all(len(line) <= columns for line in lines)
