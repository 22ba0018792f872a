"""What every benchmark shares: the repository's root, a generated corpus by its size and seed, one command
timed (wall seconds, the peak memory of its process tree, its output; killed past a `Bound`), and the side
measured (`Side`: this working tree, or a baseline revision installed in a virtual environment of its own)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .generate import generate

ROOT = Path(__file__).resolve().parent.parent


def corpus_for(tasks: int, seed: int, work: Path) -> tuple[Path, dict]:
    folder = work / f"corpus-{tasks}-{seed}"
    truth_file = folder / "truth.json"
    if not truth_file.exists():
        shutil.rmtree(folder, ignore_errors=True)
        generate(folder, tasks, seed)
    return folder, json.loads(truth_file.read_text())


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (forkserver workers included)."""
    total, pending, seen = 0, [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        pending += _children(current)
    return total


def _children(pid: int) -> list[int]:
    found = []
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


@dataclass(frozen=True)
class Bound:
    """How long and how large one measured command may grow before it is stopped."""

    seconds: float = 600.0
    rss: int = 16 * 2**30


class BoundExceededError(Exception):
    """A command stopped for passing its `Bound`; the message is the table's cell ("> 600 s, killed")."""


def timed(
    command: list[str], sample_memory: bool = False, cwd: Path = ROOT, bound: Bound | None = None
) -> tuple[float, int, str]:
    """Wall seconds, peak tree RSS (when sampled) and stdout of one command. With a `bound`, the memory is
    always sampled and a command that passes either limit is killed with its process group: `BoundExceededError`."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, start_new_session=bound is not None
    )
    peak = 0
    if sample_memory or bound:
        chunks: dict[str, bytes] = {}
        readers = [
            threading.Thread(target=lambda name=name: chunks.__setitem__(name, getattr(process, name).read()))
            for name in ("stdout", "stderr")
        ]
        for reader in readers:
            reader.start()
        while True:
            peak = max(peak, tree_rss(process.pid))
            try:  # returns as the process ends, so the sampling does not round the wall time up
                process.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                if bound and (why := _past(bound, time.perf_counter() - start, peak)):
                    _kill(process, readers)
                    raise BoundExceededError(why) from None
        for reader in readers:
            reader.join()
        stdout, stderr = chunks["stdout"], chunks["stderr"]
    else:
        stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed: {stderr.decode()[-2000:]}")
    return elapsed, peak, stdout.decode()


def _past(bound: Bound, seconds: float, peak: int) -> str:
    if seconds > bound.seconds:
        return f"> {bound.seconds:,.0f} s, killed ({peak / 2**20:,.0f} MiB peak)"
    if peak > bound.rss:
        return f"> {bound.rss / 2**30:,.0f} GiB RSS after {seconds:,.0f} s, killed"
    return ""


def _kill(process: subprocess.Popen, readers: list[threading.Thread]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for reader in readers:
        reader.join()


@dataclass(frozen=True)
class Side:
    """One archiver measured: this working tree, or a baseline revision installed in a venv of its own."""

    name: str
    python: str
    cwd: Path  # a baseline's commands run outside this tree, so that `-m archiver` imports its own package

    def command(self, *args: str) -> list[str]:
        return [self.python, "-m", "archiver", *args]

    def run(self, *args: str, sample_memory: bool = False, bound: Bound | None = None) -> tuple[float, int, str]:
        return timed(self.command(*args), sample_memory, cwd=self.cwd, bound=bound)


HERE = Side("archiver", sys.executable, ROOT)


def baseline(revision: str, work: Path) -> Side:
    """Revision `revision` of this repository, installed (not editable) in a virtual environment under
    `work`, made once and kept for later runs."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=ROOT, capture_output=True, text=True
    )
    if commit.returncode:
        raise SystemExit(f"--baseline {revision}: no such revision in {ROOT}")
    folder = work / f"baseline-{commit.stdout.strip()[:12]}"
    python = folder / "venv" / "bin" / "python"
    if not (folder / "installed").exists():
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "src").mkdir(parents=True)
        tree = subprocess.run(["git", "archive", commit.stdout.strip()], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(folder / "src")], input=tree.stdout, check=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(folder / "src")], check=True)
        (folder / "installed").write_text(commit.stdout)
    return Side(revision, str(python), folder)


def repeated(measure: Callable[[], float], runs: int, once_past: float = 60.0) -> float:
    """Median seconds of up to `runs` runs; a run longer than `once_past` seconds is not repeated."""
    times = [measure()]
    while len(times) < runs and times[0] < once_past:
        times.append(measure())
    return statistics.median(times)


def fresh(db: Path) -> Path:
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)
    return db


def ingest_time(side: Side, paths: list[Path], db: Path, runs: int, *options: str) -> float:
    """Median seconds of `side` ingesting `paths` into a fresh archive `db`."""
    return repeated(lambda: side.run("ingest", *map(str, paths), "--db", str(fresh(db)), "--json", *options)[0], runs)
