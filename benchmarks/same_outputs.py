"""Whether two archivers say the same: every command run on the samples by this working tree and by a
baseline revision, and their outputs (stdout, stderr and exit status; files a command writes; the web
view's pages and their JSON twins) compared byte for byte.

A change that only reshapes the code (a module split, a loop merged, a faster query) must leave every
output as it was; `same_contents` says the same of the archive's tables.

    python -m benchmarks.same_outputs --baseline 9635181      # names each output that differs
    python -m benchmarks.same_outputs --baseline 9635181 --keep /tmp/outputs   # and keeps both sides' outputs

Both sides work on one archive path in turn (`--work`), so that a path an output names is the same on both.
Verdicts are left out: each says the moment it was made.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from .common import HERE, ROOT, Side, baseline

SAMPLES = ROOT / "sample_transcripts"

COMMANDS: list[tuple[str, ...]] = [
    ("stats",),
    ("stats", "--format", "json"),
    ("query", "claims"),
    ("query", "claims", "--format", "jsonl"),
    ("query", "claims", "--study", "Versant*", "--format", "csv"),
    ("query", "citations"),
    ("query", "citations", "--format", "json"),
    ("query", "impact", "--study", "Versant*"),
    ("query", "impact", "--column", "*", "--format", "jsonl"),
    ("audit",),
    ("audit", "--format", "json"),
    ("audit", "--format", "sarif"),
    ("audit", "--rule", "dropped-part", "--format", "csv"),
    ("audit", "--min-base", "50"),
    ("audit", "--study", "Versant*", "--format", "json"),
    ("audit", "--agent", "*a*", "--summary"),
    ("audit", "--source", "*sdk*", "--format", "json"),
    ("export", "--raw"),
    ("sql", "SELECT count(*) AS n, min(path) AS first FROM sources"),
    ("db", "check"),
    ("db", "current"),
    ("docs",),
    ("docs", "cli"),
    ("--help",),
    ("query", "claims", "--help"),
    ("audit", "--help"),
    ("show", "no-such-id"),
    ("query", "claims", "--since", "yesterday"),
]
"""Commands run on the archive of the samples (`--db` added), each output kept under its own name."""

PAGES = [
    "/",
    "/search",
    "/search?study=Versant*&_col=unit",
    "/audit",
    "/audit?rule=dropped-part",
    "/verify",
    "/nowhere",
]
"""The web view's pages fetched from `archiver serve` (each also as its `.json` twin), with the first study,
column, table and agent's pages and the first result's (`FIRSTS`)."""

FIRSTS = {
    "study": "SELECT min(study) FROM citations",
    "column": "SELECT min(source_column) FROM citations",
    "table": "SELECT min(source_table) FROM citations",
    "agent": "SELECT min(agent) FROM result_agents",
    "result": "SELECT min(result_key) FROM results",
}

SHOWN = 4
"""How many tasks `show` prints, in each of its formats (the first, by id)."""


def first(side: Side, db: Path, sql: str) -> str:
    """The one value a query of one row and column answers."""
    done = subprocess.run(
        side.command("sql", sql, "--db", str(db), "--format", "tsv", "--no-headers"),
        cwd=side.cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def run(side: Side, db: Path, out: Path, name: str, *args: str) -> None:
    """One command's stdout, stderr and exit status, under `out/name.*`."""
    done = subprocess.run(side.command(*args, "--db", str(db)), cwd=side.cwd, capture_output=True, timeout=600)
    (out / f"{name}.out").write_bytes(done.stdout)
    (out / f"{name}.err").write_bytes(done.stderr)
    (out / f"{name}.status").write_text(f"{done.returncode}\n")


def outputs(measured: Side, work: Path) -> Path:
    """Every output of `measured` on the samples, under `work/outputs-<side>`, each command run in the same
    folder whichever side runs it (paths are shown relative to it)."""
    side = Side(measured.name, measured.python, work / "cwd")
    side.cwd.mkdir(exist_ok=True)
    out = work / f"outputs-{side.name}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    db = work / "archive.duckdb"
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)
    run(side, db, out, "ingest", "ingest", str(SAMPLES), "--json", "--workers", "1")
    for number, args in enumerate(COMMANDS):
        run(side, db, out, f"{number:02d}-{'-'.join(args).strip('-').replace('/', '_')[:60]}", *args)
    shown = "SELECT DISTINCT task_id FROM results WHERE task_id IS NOT NULL ORDER BY 1 LIMIT " + str(SHOWN)
    ids = first(side, db, shown).split()
    for task in ids:
        for fmt in ("text", "json", "html"):
            run(side, db, out, f"show-{task[:40]}-{fmt}", "show", task, "--format", fmt)
    files = work / "export-files"  # one path for both sides, as the line saying where they went names it
    shutil.rmtree(files, ignore_errors=True)
    run(side, db, out, "export-files", "export", "--raw", "--files", str(files))
    shutil.move(files, out / "export-files")
    pages(side, db, out)
    return out


def pages(side: Side, db: Path, out: Path) -> None:
    """The web view's pages and their JSON twins, from `archiver serve` on a free local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        side.command("serve", "--db", str(db), "--port", str(port)),
        cwd=side.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    named = [f"/{kind}/{urllib.parse.quote(first(side, db, sql), safe='')}" for kind, sql in FIRSTS.items()]
    try:
        for page in PAGES + named:
            address, _, query = page.partition("?")
            for twin in ("", ".json"):
                path = (address + twin if address != "/" else ("/index.json" if twin else "/")) + (
                    f"?{query}" if query else ""
                )
                name = "page" + urllib.parse.quote(path, safe="")[:100]
                (out / name).write_bytes(fetched(port, path))
    finally:
        server.terminate()
        server.wait(timeout=30)


def fetched(port: int, path: str, patience: float = 60.0) -> bytes:
    """The status line and body of one page (the server given `patience` seconds to start)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as answer:
                return f"{answer.status}\n".encode() + answer.read()
        except urllib.error.HTTPError as refused:
            return f"{refused.code}\n".encode() + refused.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def differences(left: Path, right: Path) -> list[str]:
    """One line per output that differs or is only on one side, with the first lines of its diff."""
    names = sorted(
        {p.relative_to(left) for p in left.rglob("*") if p.is_file()}
        | {p.relative_to(right) for p in right.rglob("*") if p.is_file()}
    )
    found = []
    for name in names:
        a, b = left / name, right / name
        if not a.exists() or not b.exists():
            found.append(f"{name}: only {'after' if b.exists() else 'before'}")
        elif a.read_bytes() != b.read_bytes():
            diff = difflib.unified_diff(
                a.read_text(errors="replace").splitlines(), b.read_text(errors="replace").splitlines(), lineterm="", n=0
            )
            found.append(f"{name}: differs\n    " + "\n    ".join(list(diff)[2:8]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", required=True, help="the revision compared with this tree")
    parser.add_argument("--work", type=Path, default=Path("/tmp/archiver-same-outputs"), help="a scratch folder")
    parser.add_argument("--keep", type=Path, help="copy both sides' outputs here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    before = outputs(baseline(args.baseline, args.work), args.work)
    after = outputs(HERE, args.work)
    if args.keep:
        for side in (before, after):
            shutil.copytree(side, args.keep / side.name, dirs_exist_ok=True)
    found = differences(before, after)
    count = sum(1 for p in after.rglob("*") if p.is_file())
    print("\n".join(found) or f"the same: {count} outputs byte for byte, beside {args.baseline}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
