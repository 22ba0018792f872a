"""Load on the recording proxy: `python -m benchmarks.record_load [--seconds 30] [--clients 200]`.

An a2a-sdk 1.3.0 server (the tests' scripted agent, in a process of its own) is driven for `--seconds` by
`--clients` concurrent clients over loopback, half sending unary JSON-RPC `SendMessage` calls, half
`SendStreamingMessage` streams of 8 events, first directly, then through `archiver record` (a process of
its own, spooling to a temporary folder). Reports the latency the proxy adds (p50, p99: unary calls, and the
arrival of each stream event after its request was sent), the throughput through the proxy as a share of
the direct one, and whether every event the clients received is in the spool, in order (none lost or
reordered). Needs the test extra (`pip install '.[test]'`): the server is the a2a-sdk's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_agent(port: int) -> None:
    import uvicorn

    from tests.record_support import sdk13_agent

    app, _ = sdk13_agent("Benchmark agent", f"http://127.0.0.1:{port}")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False, backlog=4096)


def started(command: list[str], port: int, **kwargs) -> subprocess.Popen:
    process = subprocess.Popen(command, cwd=ROOT, **kwargs)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"{command[:4]} did not listen on port {port}")


def request(kind: str, context: str) -> bytes:
    method, text = ("SendMessage", "message") if kind == "unary" else ("SendStreamingMessage", "long 5")
    message = {"messageId": f"m-{context}", "contextId": context, "role": "ROLE_USER", "parts": [{"text": text}]}
    return orjson.dumps({"jsonrpc": "2.0", "id": context, "method": method, "params": {"message": message}})


HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}


class Load:
    """What the clients of one phase measured."""

    def __init__(self) -> None:
        self.unary: list[float] = []  # seconds per call
        self.events: list[float] = []  # seconds from a stream's request to each of its events
        self.streams: dict[str, list[bytes]] = {}  # context id: the data of its events, as received
        self.errors: Counter = Counter()  # kind of error: how many
        self.done = 0


async def client(http: httpx.AsyncClient, url: str, kind: str, name: str, until: float, load: Load) -> None:
    n = 0
    while time.monotonic() < until:
        n += 1
        context = f"{name}-{n}"
        start = time.perf_counter()
        try:
            if kind == "unary":
                response = await http.post(url, content=request(kind, context), headers=HEADERS)
                response.raise_for_status()
                load.unary.append(time.perf_counter() - start)
            else:
                await stream(http, url, context, start, load)
            load.done += 1
        except httpx.HTTPStatusError as exc:
            load.errors[f"HTTP {exc.response.status_code}"] += 1
        except httpx.HTTPError as exc:
            load.errors[type(exc).__name__] += 1


async def stream(http: httpx.AsyncClient, url: str, context: str, start: float, load: Load) -> None:
    received: list[bytes] = []
    async with http.stream("POST", url, content=request("stream", context), headers=HEADERS) as response:
        response.raise_for_status()
        buffer = b""
        async for chunk in response.aiter_raw():
            buffer += chunk
            *events, buffer = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
            for event in events:
                data = [line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:")]
                if data:
                    load.events.append(time.perf_counter() - start)
                    received.append(b"\n".join(data))
    load.streams[context] = received


async def phase(base: str, clients: int, seconds: float, prefix: str) -> tuple[Load, float]:
    """One phase; its context ids (hence task ids) start with `prefix`, unique to it."""
    load = Load()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        url = f"{base}/a2a/jsonrpc"
        warm = time.monotonic() + min(2.0, seconds / 10)
        await asyncio.gather(*(client(http, url, "unary", f"{prefix}w{i}", warm, Load()) for i in range(clients // 4)))
        began = time.monotonic()
        until = began + seconds
        kinds = ["unary", "stream"]
        await asyncio.gather(*(client(http, url, kinds[i % 2], f"{prefix}c{i}", until, load) for i in range(clients)))
        return load, time.monotonic() - began


def spooled(folder: Path) -> dict[str, list[bytes]]:
    """The data of each stream's events in the spool, by the request's context id."""
    from archiver.record.wire import event_data
    from tests.record_support import read_spool

    streams = read_spool(folder)["streams"].values()
    return {
        s["opens"][0]["request"]["params"]["message"]["contextId"]: [event_data(e) for _, _, e in s["events"]]
        for s in streams
    }


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] if len(values) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="Length of each phase (direct, proxied).")
    parser.add_argument("--clients", type=int, default=200, help="Concurrent clients (half unary, half streaming).")
    parser.add_argument("--serve-agent", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_agent:
        serve_agent(args.serve_agent)
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    agent_port, proxy_port = free_port(), free_port()
    spool = Path(tempfile.mkdtemp(prefix="record-load-"))
    agent = started(
        [sys.executable, "-m", "benchmarks.record_load", "--serve-agent", str(agent_port)], agent_port, env=env
    )
    try:
        direct, direct_time = asyncio.run(phase(f"http://127.0.0.1:{agent_port}", args.clients, args.seconds, "d"))
        command = [sys.executable, "-m", "archiver", "record", "--upstream", f"http://127.0.0.1:{agent_port}",
                   "--listen", f"127.0.0.1:{proxy_port}", "--spool", str(spool)]  # fmt: skip
        proxy = started(command, proxy_port, env=env, stderr=subprocess.DEVNULL)
        try:
            proxied, proxied_time = asyncio.run(
                phase(f"http://127.0.0.1:{proxy_port}", args.clients, args.seconds, "p")
            )
        finally:
            proxy.send_signal(signal.SIGINT)
            proxy.wait(60)
        report(args, direct, direct_time, proxied, proxied_time, spooled(spool))
    finally:
        agent.kill()
        agent.wait()
        shutil.rmtree(spool, ignore_errors=True)


def _errors(load: Load) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in load.errors.most_common()) or "none"


def _pair(values: list[float]) -> str:
    return f"{pct(values, 50) * 1000:.1f} / {pct(values, 99) * 1000:.1f} ms"


def _added(direct: list[float], proxied: list[float]) -> str:
    """The proxied percentile less the direct one, p50 and p99 (a difference of distributions)."""
    return f"{(pct(proxied, 50) - pct(direct, 50)) * 1000:.1f} / {(pct(proxied, 99) - pct(direct, 99)) * 1000:.1f} ms"


def report(args, direct: Load, direct_time: float, proxied: Load, proxied_time: float, spool: dict) -> None:
    lost = sum(1 for context, events in proxied.streams.items() if spool.get(context) != events)
    events = sum(len(events) for events in proxied.streams.values())
    ratio = (proxied.done / proxied_time) / (direct.done / direct_time)
    rows = [
        ("clients", f"{args.clients} over loopback (half unary SendMessage, half SendStreamingMessage of 8 events), "
                    f"{args.seconds:g} s per phase", ""),
        ("calls completed", f"direct {direct.done:,} ({direct.done / direct_time:,.0f}/s), "
                            f"proxied {proxied.done:,} ({proxied.done / proxied_time:,.0f}/s); "
                            f"errors: direct {_errors(direct)}, proxied {_errors(proxied)}", ""),
        ("throughput through the proxy", f"{ratio:.0%} of direct", "target >= 90%"),
        ("unary latency p50 / p99", f"direct {_pair(direct.unary)}, proxied {_pair(proxied.unary)}", ""),
        ("added unary latency p50 / p99", _added(direct.unary, proxied.unary), "target p99 < 2 ms"),
        ("stream event arrival p50 / p99", f"direct {_pair(direct.events)}, proxied {_pair(proxied.events)}", ""),
        ("added latency per stream event p50 / p99", _added(direct.events, proxied.events), "target p99 < 1 ms"),
        ("events lost or reordered", f"{lost} of {len(proxied.streams):,} streams differ from the spool "
                                     f"({events:,} events received)", "target 0"),
    ]  # fmt: skip
    print(f"## record proxy, {args.clients} clients, {args.seconds:g} s\n")
    cores = os.cpu_count()
    print(f"`python -m benchmarks.record_load --seconds {args.seconds:g} --clients {args.clients}` on {cores} cores "
          f"(shared), Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}\n")  # fmt: skip
    print("| measure | figure | target |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
