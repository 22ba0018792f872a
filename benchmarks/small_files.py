"""Many small files against one big file: the same records ingested as one file each and as one file.

    python -m benchmarks.small_files --tasks 20000           # 10,000 one-record files, default workers
    python -m benchmarks.small_files --tasks 20000 --workers 1

A dump written one file per task should ingest about as fast as the same records in one file (issue 19's
target: at most 2x). `measure` takes the archiver command as a list, so that a baseline revision's
archiver (its own virtual environment) can be measured beside this one in the same run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .run import ROOT, corpus_for


def split(corpus: Path, out: Path, count: int = 10_000) -> tuple[Path, Path]:
    """The first `count` JSON Lines records of a generated corpus (its `*.jsonl` files in sorted order),
    each as its own one-line file in `out/many/`, and all of them as `out/one/all.jsonl`."""
    lines: list[bytes] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        lines += [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]
        if len(lines) >= count:
            break
    lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines[:count]]
    many, one = out / "many", out / "one"
    for folder in (many, one):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    width = len(str(len(lines)))
    for number, line in enumerate(lines):
        (many / f"{number:0{width}d}.jsonl").write_bytes(line)
    (one / "all.jsonl").write_bytes(b"".join(lines))
    return many, one / "all.jsonl"


def ingest_seconds(archiver_cmd: list[str], path: Path, db: Path, workers: int | None = None) -> float:
    """Wall seconds of one ingest of `path` into a fresh archive `db`, run outside the repository (so that
    another environment's `python -m archiver` imports its own package)."""
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)
    command = [*archiver_cmd, "ingest", str(path), "--db", str(db), "--json"]
    if workers is not None:
        command += ["--workers", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, cwd=tempfile.gettempdir(), check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def measure(
    many: Path, one: Path, work: Path, archiver_cmd: list[str], runs: int = 3, workers: int | None = None
) -> dict:
    """Median seconds to ingest the many small files and the one file (each into a fresh archive in
    `work`, interleaved), and their ratio."""
    work.mkdir(parents=True, exist_ok=True)
    times: dict[str, list[float]] = {"many": [], "one": []}
    for _ in range(runs):
        for name, path in (("many", many), ("one", one)):
            times[name].append(ingest_seconds(archiver_cmd, path, work / f"{name}.duckdb", workers))
    many_s, one_s = statistics.median(times["many"]), statistics.median(times["one"])
    return {"many_seconds": many_s, "one_seconds": one_s, "ratio": many_s / one_s}


def main() -> None:
    parser = argparse.ArgumentParser(description="many small files against one file")
    parser.add_argument("--tasks", type=int, default=20000, help="tasks of the generated corpus")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--files", type=int, default=10_000, help="one-record files to ingest")
    parser.add_argument("--workers", type=int, default=None, help="default: the archiver's own")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "corpus")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus, _ = corpus_for(args.tasks, args.seed, args.work)
    many, one = split(corpus, args.work / f"small-files-{args.files}", args.files)
    archiver = [sys.executable, "-m", "archiver"]
    found = measure(many, one, args.work / "small-files-db", archiver, args.runs, args.workers)
    workers = "default" if args.workers is None else str(args.workers)
    print("| measure | seconds |", "|---|---|", sep="\n")
    print(f"| {args.files:,} one-record files, workers {workers} | {found['many_seconds']:.2f} |")
    print(f"| the same records in one file | {found['one_seconds']:.2f} |")
    print(f"| ratio (target <= 2x) | {found['ratio']:.1f}x |")


if __name__ == "__main__":
    main()
