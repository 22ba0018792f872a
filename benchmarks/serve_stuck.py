"""`archiver serve` against clients that ask for a large answer and never read it (issue 39, item 6).

    python -m benchmarks.serve_stuck                       # 40 clients, a 3 MB answer
    python -m benchmarks.serve_stuck --clients 40 --rows 75000 --hold 10

Builds an archive of one task whose data Part is `--rows` rows (75,000: its `/result/ID.json` is about
3 MB), runs `archiver serve` in its own process on loopback, asks once for the answer (so that it is
kept), then opens `--clients` connections that each send the request and never read, with a small receive
buffer. It prints the server's RSS before, while they are stuck (after `--hold` s), after they close, and
how long SIGINT then takes to end the server; and whether a normal client is answered meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from .common import ROOT

MiB = 2**20


def big_archive(folder: Path, rows: int) -> str:
    """An archive of one task whose data Part has `rows` rows."""
    from archiver.archive import Archive

    data = {"rows": [{"label": f"row {n}", "share": n / rows} for n in range(rows)]}
    task = {
        "kind": "task",
        "id": "t-big",
        "contextId": "ctx-big",
        "status": {"state": "completed", "timestamp": "2026-04-21T10:00:00Z"},
        "artifacts": [
            {
                "artifactId": "answer",
                "parts": [{"kind": "data", "data": data}],
            }
        ],
    }
    path = folder / "big.json"
    path.write_bytes(json.dumps(task).encode())
    db = str(folder / "big.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(path)], workers=1)
    return db


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stuck_client(port: int, path: str) -> socket.socket:
    """A connection that asks for `path` and never reads its answer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return sock


def answered(base: str, path: str, timeout: float = 120.0) -> tuple[int, int]:
    with urllib.request.urlopen(base + path, timeout=timeout) as answer:
        return answer.status, len(answer.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--rows", type=int, default=75_000)
    parser.add_argument("--hold", type=float, default=10.0, help="seconds the clients stay stuck")
    parser.add_argument("--path", default="/result/t-big.json", help="what the clients ask for (or /result/t-big)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after they close before measuring")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="serve-stuck-"))
    db = big_archive(folder, args.rows)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "archiver", "serve", "--db", db, "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    path = args.path
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, size = answered(base, path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        print(f"answer: {status}, {size / MiB:.1f} MiB")
        time.sleep(1)
        before = rss(server.pid)
        print(f"RSS before: {before / MiB:.0f} MiB")
        clients = [stuck_client(port, path) for _ in range(args.clients)]
        time.sleep(args.hold)
        stuck = rss(server.pid)
        print(f"RSS with {args.clients} stuck clients after {args.hold:g} s: {stuck / MiB:.0f} MiB")
        started = time.monotonic()
        status, size = answered(base, "/index.json")
        print(f"a normal request meanwhile: {status} in {time.monotonic() - started:.2f} s")
        for sock in clients:
            sock.close()
        time.sleep(args.settle)
        after = rss(server.pid)
        print(f"RSS {args.settle:g} s after they closed: {after / MiB:.0f} MiB ({(after - before) / MiB:+.0f} MiB)")
        started = time.monotonic()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
            print(f"SIGINT to exit: {time.monotonic() - started:.2f} s, exit status {server.returncode}")
        except subprocess.TimeoutExpired:
            print("SIGINT: still running after 60 s")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        output = server.stdout.read().decode(errors="replace") if server.stdout else ""
        if "terminate called" in output or "Traceback" in output:
            print("server output:\n" + output[-2000:])


if __name__ == "__main__":
    main()
