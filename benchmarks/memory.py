"""Peak memory of the ingest process tree on inputs that are large within one file.

Three inputs, each ingested by `python -m archiver ingest` into a fresh archive while the summed
RSS of the process tree is sampled from /proc (as `benchmarks/run.py` does):

- one JSON Lines file of `--file-mb` MiB (v1.0, v0.3 and REST JSON-RPC lines repeated under new
  task ids: every task distinct);
- one JSON Lines file whose middle line is `--line-mb` MiB (a task whose file Part carries its
  bytes inline), between ordinary lines;
- a gzip bomb: a few good lines, then spaces without a newline expanding past the gzip limit
  (gzip members of spaces, concatenated: built in a second).

    python -m benchmarks.memory --file-mb 2048 --line-mb 300 --bomb-gb 9

Each case is killed after `--timeout` seconds. Inputs are kept under `--work` between runs.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from .generate import Corpus
from .run import ROOT, tree_rss

BLOCK_TASKS = 2_000
LINE_KINDS = ("v1-rpc", "v03-rpc", "v03-rest")


def big_file(path: Path, megabytes: int) -> Path:
    """A JSON Lines file of about `megabytes` MiB: one block of generated tasks, repeated with
    each repetition's task, context and artifact ids renamed."""
    if path.exists():
        return path
    corpus = Corpus(path.parent, seed=11)
    block = b"".join(
        line + b"\n" for index in range(BLOCK_TASKS) for line in corpus.lines_for(LINE_KINDS[index % len(LINE_KINDS)])
    )
    with open(path, "wb") as out:
        repetition = 0
        while out.tell() < megabytes * 2**20:
            out.write(block.replace(b"task-", b"t%05d-" % repetition))
            repetition += 1
    return path


def huge_line(path: Path, megabytes: int) -> Path:
    """JSON Lines with one task line of about `megabytes` MiB (an inline file Part) among ordinary lines."""
    if path.exists():
        return path
    corpus = Corpus(path.parent, seed=12)
    before, after = corpus.lines_for("v1-rpc"), corpus.lines_for("v03-rpc")
    inline = base64.b64encode(os.urandom(megabytes * 2**20 * 3 // 4)).decode()
    task = {
        "jsonrpc": "2.0",
        "id": 99,
        "result": {
            "id": "task-huge",
            "contextId": "ctx-huge",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [
                {
                    "artifactId": "huge-answer",
                    "name": "answer",
                    "parts": [
                        {"text": "The whole extract, attached."},
                        {"raw": inline, "filename": "extract.bin", "mediaType": "application/octet-stream"},
                    ],
                }
            ],
        },
    }
    with open(path, "wb") as out:
        out.writelines(line + b"\n" for line in [*before, orjson.dumps(task), *after])
    return path


def gzip_bomb(path: Path, gigabytes: int) -> Path:
    """A few good lines, then `gigabytes` GiB of spaces with no newline, as concatenated gzip members."""
    if path.exists():
        return path
    corpus = Corpus(path.parent, seed=13)
    member = gzip.compress(b" " * 2**26, compresslevel=9, mtime=0)
    with open(path, "wb") as out:
        out.write(gzip.compress(b"".join(line + b"\n" for line in corpus.lines_for("v1-rpc")), mtime=0))
        out.writelines(member for _ in range(gigabytes * 16))
    return path


def peak_of(path: Path, work: Path, timeout: float, python: str, env: dict | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak tree RSS in bytes and exit status of ingesting `path` into a new archive."""
    db = work / "memory.duckdb"
    for stale in work.glob("memory.duckdb*"):
        stale.unlink()
    command = [python, "-m", "archiver", "ingest", "--db", str(db), "--json", str(path)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()))
    reader.start()
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss(process.pid))
        if time.perf_counter() - start > timeout:
            process.kill()
            break
        time.sleep(0.1)
    process.wait()
    reader.join()
    if process.returncode not in (0, 1):
        sys.stderr.write(b"".join(errors).decode(errors="replace")[-1500:])
    return time.perf_counter() - start, peak, process.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file-mb", type=int, default=2048)
    parser.add_argument("--line-mb", type=int, default=300)
    parser.add_argument("--bomb-gb", type=int, default=9, help="decompressed GiB (the default limit is 8)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/archiver-memory"))
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--only", choices=("file", "line", "bomb"), action="append")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run the archiver with")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cases = {
        "file": lambda: big_file(args.work / f"single-{args.file_mb}.jsonl", args.file_mb),
        "line": lambda: huge_line(args.work / f"line-{args.line_mb}.jsonl", args.line_mb),
        "bomb": lambda: gzip_bomb(args.work / f"bomb-{args.bomb_gb}.jsonl.gz", args.bomb_gb),
    }
    print("| input | size on disk | wall | peak RSS (process tree) | exit |")
    print("|---|---|---|---|---|")
    for name in args.only or list(cases):
        path = cases[name]()
        seconds, peak, status = peak_of(path, args.work, args.timeout, args.python)
        print(
            f"| {path.name} | {path.stat().st_size / 2**20:,.0f} MiB | {seconds:.0f} s | "
            f"{peak / 2**20:,.0f} MiB | {status} |",
            flush=True,
        )
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
