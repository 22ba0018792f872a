"""Many small files against one big file: the same records ingested as one file each and as one file.

    python -m benchmarks.small_files --tasks 20000           # 10,000 one-record files, default workers
    python -m benchmarks.small_files --tasks 20000 --workers 1

A dump written one file per task should ingest about as fast as the same records in one file (issue 19's
target: at most 2x). `measure` takes the side measured (`benchmarks.common.Side`), so that a baseline
revision's archiver (its own virtual environment) is measured beside this one by `benchmarks/run`.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from .common import HERE, ROOT, Side, corpus_for, ingest_time


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


def measure(side: Side, many: Path, one: Path, db: Path, runs: int = 3, *options: str) -> tuple[float, float]:
    """Median seconds for `side`'s archiver to ingest the many small files and the one file, each into a
    fresh archive `db`."""
    return ingest_time(side, [many], db, runs, *options), ingest_time(side, [one], db, runs, *options)


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
    options = () if args.workers is None else ("--workers", str(args.workers))
    many_s, one_s = measure(HERE, many, one, args.work / "bench-small.duckdb", args.runs, *options)
    workers = "default" if args.workers is None else str(args.workers)
    print("| measure | seconds |", "|---|---|", sep="\n")
    print(f"| {args.files:,} one-record files, workers {workers} | {many_s:.2f} |")
    print(f"| the same records in one file | {one_s:.2f} |")
    print(f"| ratio (target <= 2x) | {many_s / one_s:.1f}x |")


if __name__ == "__main__":
    main()
