"""The progress line as a terminal shows it (issue 28): `archiver ingest` runs in a pseudo-terminal of 60
and 100 columns, its output is played through a terminal emulator (pyte), and the screen holds one line
of it at the end. Before, a line wider than the terminal wrapped, and each redraw cleared only its last
row: 105 `ingesting:` lines were left in one ingest at 100 columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.generate import generate
from tests.terminal import in_terminal

pyte = pytest.importorskip("pyte", reason="the test extra's pyte is not installed")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 3000, seed=5)
    return out


@pytest.mark.parametrize("columns", [60, 100])
def test_the_progress_line_is_redrawn_in_place_and_leaves_one_line(corpus, tmp_path, columns):
    args = ["ingest", str(corpus), "--db", str(tmp_path / "a.duckdb"), "--workers", "1"]
    written, lines = in_terminal(args, columns)
    assert written.count(b"ingesting: ") >= 1, "the progress line was drawn while the ingest ran"
    assert not [line for line in lines if "ingesting" in line], lines
    [done] = [line for line in lines if line.startswith("ingested: ")]
    assert len(done) < columns
    assert all(len(line) <= columns for line in lines)
