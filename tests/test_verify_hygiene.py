"""`archiver verify`, second round (issue 29): process hygiene, exit codes and resuming an interrupted run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.cli import main
from tests.test_verify import ANALYST_LAYER, analyst_cite, ingest, make_analyst, outcomes

HYGIENE_EXTRACTORS = """
import os
import subprocess
import sys
import time


def spawn_and_hang(relation, column, context):
    child = subprocess.Popen(["sleep", "60"])
    with open(os.environ["ARCHIVER_TEST_CHILD"], "w") as handle:
        handle.write(str(child.pid))
    time.sleep(60)


def exit_zero(relation, column, context):
    sys.exit(0)


def hard_exit_zero(relation, column, context):
    os._exit(0)
"""


@pytest.fixture
def analyst(tmp_path: Path) -> Path:
    return make_analyst(tmp_path)


@pytest.fixture
def hygiene(analyst: Path) -> Path:
    (analyst.parent / "hygiene.py").write_text(HYGIENE_EXTRACTORS)
    analyst.write_text(
        ANALYST_LAYER.format(timeout=2)
        + '\n[extractors.spawn]\nmodule = "hygiene.py"\nfunction = "spawn_and_hang"\n'
        + '[extractors.exit_zero]\nmodule = "hygiene.py"\n'
        + '[extractors.hard_exit_zero]\nmodule = "hygiene.py"\n'
    )
    return analyst


def running(pid: int) -> bool:
    """Whether the process is alive (a zombie, dead but not yet reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_a_timed_out_extractor_is_killed_with_the_processes_it_started(archive, write, hygiene, monkeypatch):
    marker = hygiene.parent / "child.pid"
    monkeypatch.setenv("ARCHIVER_TEST_CHILD", str(marker))
    ingest(archive, write, {"a": ({"n": 1}, analyst_cite("unfiltered", "spawn", fielded=None))})
    found = outcomes(archive.verify())
    assert found["a"][:2] == ("not-rerunnable", "the extractor did not finish within 2s and was stopped")
    child = int(marker.read_text())
    deadline = time.monotonic() + 5
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = running(child)
    if alive:
        os.kill(child, 9)
    assert not alive, "the sleep the extractor started outlived its timeout"


@pytest.mark.slow
def test_exit_codes_are_reported_as_they_were(archive, write, hygiene):
    ingest(
        archive,
        write,
        {
            "a": ({"n": 1}, analyst_cite("unfiltered", "exit_zero", fielded=None)),
            "b": ({"n": 1}, analyst_cite("unfiltered", "hard_exit_zero", fielded=None, period="W7")),
        },
    )
    found = outcomes(archive.verify())
    assert found["a"][:2] == ("not-rerunnable", "the extractor called sys.exit(0) instead of returning (hygiene.py:16)")
    assert found["b"][:2] == ("not-rerunnable", "the extractor's process exited with code 0")


@pytest.mark.slow
def test_a_run_after_an_interrupted_one_reruns_only_citations_without_a_current_verdict(
    archive, write, analyst, monkeypatch, tmp_path
):
    from archiver.verify import worker

    ingest(
        archive,
        write,
        {
            "a": ({"n": 55}, analyst_cite("unfiltered", fielded=None)),
            "b": ({"n": 55}, analyst_cite("wave", period="W5", fielded=None)),
            "c": ({"n": 1}, analyst_cite("unfiltered", fielded=None, period="W7")),
        },
    )
    real, calls = worker.Worker.run, []

    def counted(self, *args):
        calls.append(args[2].period)
        if len(calls) == 2 and interrupt:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(worker.Worker, "run", counted)
    interrupt = True
    with pytest.raises(KeyboardInterrupt):
        archive.verify()
    assert calls == ["W5", "W6 (April 2026)"]
    interrupt, calls[:] = False, []
    resumed = archive.verify()
    assert calls == ["W6 (April 2026)", "W7"]  # W5's verdict is current: kept, not run again
    assert [(v.task_id, v.verdict, v.kept) for v in resumed.verdicts] == [
        ("b", "reproduced", True),
        ("a", "reproduced", False),
        ("c", "differs", False),
    ]
    assert resumed.summary()["kept"] == 1
    calls[:] = []
    archive.verify()  # the last run finished: every citation runs again
    assert calls == ["W5", "W6 (April 2026)", "W7"]

    calls[:] = []
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    shown = CliRunner().invoke(main, ["verify", "--db", db, "--resume"])
    assert shown.exit_code == 1, shown.output  # c differs, kept or not
    assert calls == []
    assert "resumed: 3 current verdicts of the interrupted run kept, not run again" in shown.output
