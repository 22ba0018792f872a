"""Load test of `archiver serve`: 20 concurrent clients over a mix of pages and their JSON twins, for a
bounded time, on loopback only; p50, p95 and p99 per page kind.

    python -m benchmarks.serve_load                       # builds the 1M-claim archive as benchmarks/run does
    python -m benchmarks.serve_load --db bench-10M.duckdb --seconds 30

The archive is the benchmark's: its 20k-task corpus ingested, then scaled to the claims wanted
(`benchmarks.run.scale_archive`). The server is `archiver serve` in its own process; the clients are
threads with one keep-alive connection each.

Two phases. First every address of the mix is asked once, by two clients (at most --warm-seconds): its
first answer, worked out from the archive, is the page's cold time. The server keeps each answer until a
commit changes the archive, so then 20 clients ask the same addresses for --seconds: the p50, p95 and p99
of a server in use. Both are reported, per page kind.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import duckdb

from .common import HERE, ROOT, Bound, Side, corpus_for
from .scale import scale_archive

KINDS = (
    "overview",
    "overview.json",
    "search (one column)",
    "search.json (one column)",
    "search citations (study, period)",
    "search impact (one column)",
    "result",
    "result.json",
    "column",
    "study.json",
    "audit",
    "audit.json",
    "verify",
)


def archive_for(claims: int, work: Path) -> Path:
    """The benchmark's archive scaled to about `claims` claims (built once, kept under `work`)."""
    target = work / f"serve-{claims}.duckdb"
    if target.exists():
        return target
    corpus, _ = corpus_for(20000, 7, work)
    db = work / "bench-20000.duckdb"
    if not db.exists():
        subprocess.run(HERE.command("ingest", str(corpus), "--db", str(db), "--json"), check=True, capture_output=True)
    scale_archive(db, target, claims)
    return target


def targets(db: Path, seed: int) -> dict[str, list[str]]:
    """For each page kind, the addresses the clients pick from: many columns, tasks, studies and pages."""
    with duckdb.connect(str(db), read_only=True) as con:
        columns = [r[0] for r in con.execute("SELECT DISTINCT source_column FROM citations ORDER BY 1").fetchall()]
        pairs = con.execute("SELECT DISTINCT study, period FROM citations ORDER BY 1, 2").fetchall()
        tasks = [
            r[0]
            for r in con.execute(
                "SELECT task_id FROM results WHERE claims > 0 AND task_id IS NOT NULL "
                f"USING SAMPLE 100 ROWS (reservoir, {int(seed)})"
            ).fetchall()
        ]
        studies = [r[0] for r in con.execute("SELECT DISTINCT study FROM citations ORDER BY 1").fetchall()]
    q = lambda **kw: "?" + urlencode(kw)  # noqa: E731
    return {
        "overview": ["/"],
        "overview.json": ["/index.json"],
        "search (one column)": [f"/search{q(column=c)}" for c in columns],
        "search.json (one column)": [f"/search.json{q(column=c, page=p)}" for c in columns for p in (1, 3)],
        "search citations (study, period)": [f"/search{q(kind='citations', study=s, period=p)}" for s, p in pairs],
        "search impact (one column)": [f"/search{q(kind='impact', column=c)}" for c in columns],
        "result": [f"/result/{quote(t, safe='')}" for t in tasks],
        "result.json": [f"/result/{quote(t, safe='')}.json" for t in tasks],
        "column": [f"/column/{quote(c, safe='')}" for c in columns],
        "study.json": [f"/study/{quote(s, safe='')}.json" for s in studies],
        "audit": [f"/audit{q(page=p)}" for p in range(1, 40)] + ["/audit?rule=small-base", "/audit?severity=error"],
        "audit.json": [f"/audit.json{q(page=p, rule=r)}" for p in (1, 2, 5) for r in ("uncited-result", "small-base")],
        "verify": ["/verify"],
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_process(db: Path, port: int) -> subprocess.Popen:
    """`archiver serve` on `db` and `port` in a process of its own, without a token, its errors piped."""
    return subprocess.Popen(
        HERE.command("serve", "--db", str(db), "--port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "ARCHIVER_TOKEN": "", "ARCHIVER_SERVE_TOKEN": ""},
    )


def get(connection: http.client.HTTPConnection, path: str) -> int:
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    return response.status


def client(port: int, urls: dict[str, list[str]], until: float, seed: int, out: dict[str, list[float]], errors: list):
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.monotonic() < until:
        kind = rng.choice(KINDS)
        path = rng.choice(urls[kind])
        started = time.perf_counter()
        status = get(connection, path)
        elapsed = time.perf_counter() - started
        if status != 200:
            errors.append((status, path))
        out.setdefault(kind, []).append(elapsed)
    connection.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def first_answers(port: int, urls: dict[str, list[str]], seconds: float, clients: int = 2) -> dict[str, list[float]]:
    """Every address asked once (its first answer, worked out from the archive), by a few clients, for at
    most `seconds`: the cold times per page kind."""
    pending = [(kind, path) for kind in KINDS for path in urls[kind]]
    random.Random(0).shuffle(pending)
    out: dict[str, list[float]] = {}
    until = time.monotonic() + seconds
    lock = threading.Lock()

    def ask() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.monotonic() < until:
            with lock:
                if not pending:
                    break
                kind, path = pending.pop()
            started = time.perf_counter()
            get(connection, path)
            out.setdefault(kind, []).append(time.perf_counter() - started)
        connection.close()

    threads = [threading.Thread(target=ask) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


def pages(column: str, study: str) -> dict[str, str]:
    """The fixed pages of issue 40's serve row, about the busiest column and its study."""
    return {
        "overview": "/",
        "search by column": f"/search?{urlencode({'column': column})}",
        "column page": f"/column/{quote(column, safe='')}",
        "audit": "/audit",
        "conflicts": f"/download/conflicts.json?{urlencode({'column': column})}",
        "study page": f"/study/{quote(study, safe='')}",
    }


def after_start(side: Side, db: Path, addresses: dict[str, str], bound: Bound) -> tuple[float | str, dict]:
    """`archiver serve` of `side` started on `db`: the seconds to its first answer (the overview, process
    start included), then each page asked once in turn, its first answer's seconds (the overview's is the
    request of that first answer). A wait past `bound.seconds` ends the start: its cell says so, the pages
    not yet asked are left out."""
    port = free_port()
    server = subprocess.Popen(
        side.command("serve", "--db", str(db), "--port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=side.cwd,
        env={**os.environ, "ARCHIVER_TOKEN": ""},
    )
    started = time.perf_counter()
    first: float | str = f"> {bound.seconds:,.0f} s, no answer"
    answered: dict[str, float | str] = {}
    try:
        connection = _connected(port, started + bound.seconds, server)
        for kind, path in addresses.items() if connection else ():
            asked = time.perf_counter()
            wait = max(1.0, started + bound.seconds - asked) if kind == "overview" else bound.seconds
            connection.sock.settimeout(wait)
            try:
                status = get(connection, path)
            except TimeoutError:
                answered[kind] = f"> {wait:,.0f} s, stopped"
                break
            if status != 200:
                raise RuntimeError(f"{side.name} serve answered {status} to {path}")
            answered[kind] = time.perf_counter() - asked
            if kind == "overview":
                first = time.perf_counter() - started
        return first, answered
    finally:
        server.terminate()
        server.wait(30)


def _connected(port: int, deadline: float, server: subprocess.Popen) -> http.client.HTTPConnection | None:
    while time.perf_counter() < deadline:
        if server.poll() is not None:
            raise RuntimeError("archiver serve did not start")
        connection = http.client.HTTPConnection("127.0.0.1", port)
        try:
            connection.connect()
            return connection
        except OSError:
            time.sleep(0.05)
    return None


def run(db: Path, seconds: float, clients: int, seed: int, warm_seconds: float) -> tuple[list[tuple], dict]:
    urls = targets(db, seed)
    port = free_port()
    server = serve_process(db, port)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                warm = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                started = time.perf_counter()
                status = get(warm, "/index.json")  # the snapshot: counts and audit, once per commit
                snapshot_s = time.perf_counter() - started
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("archiver serve did not start: " + server.stderr.read().decode()) from None
                time.sleep(0.2)
        assert status == 200
        cold = first_answers(port, urls, warm_seconds)
        out: dict[str, list[float]] = {}
        errors: list = []
        until = time.monotonic() + seconds
        threads = [
            threading.Thread(target=client, args=(port, urls, until, seed + i, out, errors)) for i in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.terminate()
        server.wait(30)
    every = [v for values in out.values() for v in values]
    rows = [
        (
            kind,
            len(out.get(kind, [])),
            *(1000 * percentile(out[kind], p) for p in (0.5, 0.95, 0.99)),
        )
        for kind in KINDS
        if out.get(kind)
    ]
    rows.append(("all", len(every), *(1000 * percentile(every, p) for p in (0.5, 0.95, 0.99))))
    for row_index, row in enumerate(rows[:-1]):
        firsts = cold.get(row[0], [])
        rows[row_index] = (*row, 1000 * statistics.median(firsts) if firsts else None, 1000 * max(firsts, default=0))
    rows[-1] = (*rows[-1], None, None)
    return rows, {
        "cold_snapshot_s": snapshot_s,
        "errors": errors[:10],
        "error_count": len(errors),
        "rps": len(every) / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="an archive (default: the benchmark's, scaled to --claims)")
    parser.add_argument("--claims", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--warm-seconds", type=float, default=240.0, help="at most this long asking each address once")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "corpus")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    db = args.db or archive_for(args.claims, args.work)
    with duckdb.connect(str(db), read_only=True) as con:
        claims = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    rows, notes = run(db, args.seconds, args.clients, args.seed, args.warm_seconds)
    print(
        f"`python -m benchmarks.serve_load` on {os.cpu_count()} cores, Python {sys.version.split()[0]}: "
        f"{claims:,} claims, {args.clients} clients, {args.seconds:.0f} s, {notes['rps']:.1f} requests/s, "
        f"{notes['error_count']} errors; the overview's snapshot cold {notes['cold_snapshot_s']:.2f} s\n"
    )
    print(
        "| page | requests | p50 ms | p95 ms | p99 ms | first answer, median / max ms |\n|---|---:|---:|---:|---:|---:|"
    )
    for kind, n, p50, p95, p99, first, worst in rows:
        firsts = f"{first:,.0f} / {worst:,.0f}" if first is not None else ""
        print(f"| {kind} | {n:,} | {p50:,.0f} | {p95:,.0f} | {p99:,.0f} | {firsts} |")
    if notes["errors"]:
        print("\nerrors:", json.dumps(notes["errors"]))


if __name__ == "__main__":
    main()
