"""Peak memory of the ingest process tree on inputs that are large within one file.

Three inputs, each ingested by `python -m archiver ingest` into a fresh archive while the summed
RSS of the process tree is sampled from /proc (as `benchmarks/run.py` does):

- one JSON Lines file of `--file-mb` MiB (v1.0, v0.3 and REST JSON-RPC lines repeated under new
  task ids: every task distinct);
- one JSON Lines file whose middle line is `--line-mb` MiB (a task whose file Part carries its
  bytes inline), between ordinary lines;
- a gzip bomb: a few good lines, then spaces without a newline expanding past the gzip limit
  (gzip members of spaces, concatenated: built in a second);
- a folder of `--values` records, each holding a `--value-mb` MiB inline file Part (100 records to a
  file), ingested with default settings and exported back (`export --raw --files`), byte for byte.

    python -m benchmarks.memory --file-mb 2048 --line-mb 300 --bomb-gb 9 --values 10000 --value-mb 1

Each case is killed after `--timeout` seconds. Inputs are kept under `--work` between runs.
"""

from __future__ import annotations

import argparse
import base64
import filecmp
import gzip
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from .common import ROOT, tree_rss
from .generate import Corpus

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


def inline_values(folder: Path, count: int, megabytes: float, per_file: int = 100) -> Path:
    """A folder of `count` JSON Lines records, `per_file` to a file, each a task whose file Part carries
    `megabytes` MiB inline (base64 of random bytes: no two alike, nothing to compress)."""
    if folder.exists():
        return folder
    folder.mkdir(parents=True)
    corpus = Corpus(folder, seed=14)
    size = int(megabytes * 2**20) * 3 // 4
    for first in range(0, count, per_file):
        with open(folder / f"values-{first:06d}.jsonl", "wb") as out:
            for index in range(first, min(count, first + per_file)):
                line = orjson.loads(corpus.lines_for("v1-rpc")[-1])
                task = line["result"].get("task", line["result"])
                task["id"] = f"task-value-{index}"
                part = {"raw": base64.b64encode(os.urandom(size)).decode(), "mediaType": "application/pdf"}
                task.setdefault("artifacts", [{"artifactId": "a", "parts": []}])[0]["parts"].append(
                    {**part, "filename": f"extract-{index}.pdf"}
                )
                out.write(orjson.dumps(line) + b"\n")
    return folder


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


def exported_alike(folder: Path, work: Path, python: str) -> str:
    """`export --raw --files` of the archive `peak_of` made from `folder`: timed, and compared byte for byte
    with the files ingested."""
    target = work / "exported"
    shutil.rmtree(target, ignore_errors=True)
    command = [python, "-m", "archiver", "export", "--raw", "--files", str(target), "--db", str(work / "memory.duckdb")]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    seconds = time.perf_counter() - start
    files = sorted(p.name for p in folder.iterdir())
    alike = sorted(p.name for p in target.iterdir()) == files and all(
        filecmp.cmp(folder / name, target / name, shallow=False) for name in files
    )
    shutil.rmtree(target, ignore_errors=True)
    return f"`export --raw --files` of {folder.name}: {seconds:.0f} s, {len(files)} files, " + (
        "byte for byte alike" if alike else "NOT ALIKE"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file-mb", type=int, default=2048)
    parser.add_argument("--line-mb", type=int, default=300)
    parser.add_argument("--bomb-gb", type=int, default=9, help="decompressed GiB (the default limit is 8)")
    parser.add_argument("--values", type=int, default=10000, help="records each holding a large inline file Part")
    parser.add_argument("--value-mb", type=float, default=1.0, help="MiB of each of those Parts")
    parser.add_argument("--work", type=Path, default=Path("/tmp/archiver-memory"))
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--only", choices=("file", "line", "bomb", "values"), action="append")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run the archiver with")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cases = {
        "file": lambda: big_file(args.work / f"single-{args.file_mb}.jsonl", args.file_mb),
        "line": lambda: huge_line(args.work / f"line-{args.line_mb}.jsonl", args.line_mb),
        "bomb": lambda: gzip_bomb(args.work / f"bomb-{args.bomb_gb}.jsonl.gz", args.bomb_gb),
        "values": lambda: inline_values(
            args.work / f"values-{args.values}x{args.value_mb:g}", args.values, args.value_mb
        ),
    }
    exported = []
    print("| input | size on disk | wall | peak RSS (process tree) | exit |")
    print("|---|---|---|---|---|")
    for name in args.only or list(cases):
        path = cases[name]()
        seconds, peak, status = peak_of(path, args.work, args.timeout, args.python)
        size = sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size
        print(
            f"| {path.name} | {size / 2**20:,.0f} MiB | {seconds:.0f} s | {peak / 2**20:,.0f} MiB | {status} |",
            flush=True,
        )
        if path.is_dir() and status == 0:
            exported.append(exported_alike(path, args.work, args.python))
    for line in exported:
        print(line)
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
