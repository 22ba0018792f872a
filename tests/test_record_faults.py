"""The recording proxy is never the weak link: what it does when the upstream is down or slow, when the client
leaves mid-stream, when the spool's disk is full and when the archive is locked; and what it passes through
besides A2A (bodies of any size and type, status codes, headers)."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from archiver.archive import Archive
from archiver.record.serve import ProxyThread, RecordOptions
from tests.record_support import ServerThread, read_spool
from tests.servers import free_port


def plain_upstream(closed: threading.Event) -> Starlette:
    """An HTTP server with no A2A in it, for what the proxy must pass whatever it is."""

    async def forever(request):
        async def events():
            try:
                n = 0
                while True:
                    yield f'data: {{"n": {n}}}\n\n'.encode()
                    yield b": keep-alive\n\n"
                    n += 1
                    await asyncio.sleep(0.02)
            finally:
                closed.set()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def paced(request):
        async def events():
            for n in range(4):
                yield f"id: {n}\r\nevent: tick\r\ndata: {n}\r\n\r\n".encode()
                await asyncio.sleep(0.4)

        return StreamingResponse(events(), media_type="text/event-stream")

    async def slow(request):
        await asyncio.sleep(float(request.query_params["seconds"]))
        return JSONResponse({"slept": True})

    async def big(request):
        return Response(b'{"pad": "' + b"x" * 20000 + b'"}', media_type="application/json")

    async def echo(request):
        body = await request.body()
        headers = {"x-echo": request.headers.get("x-custom", ""), "a2a-extensions": "urn:test"}
        return Response(body, status_code=201, media_type=request.headers.get("content-type"), headers=headers)

    return Starlette(
        routes=[
            Route("/forever", forever),
            Route("/paced", paced),
            Route("/slow", slow),
            Route("/big", big),
            Route("/echo", echo, methods=["POST", "PUT"]),
        ]
    )


@pytest.fixture
def stack():
    with ExitStack() as opened:
        yield opened


@pytest.fixture
def closed():
    return threading.Event()


@pytest.fixture
def upstream(stack, closed):
    return stack.enter_context(ServerThread(plain_upstream(closed)))


def start(stack: ExitStack, upstream: str, spool: Path, **options) -> tuple[str, ProxyThread]:
    proxy = ProxyThread(RecordOptions(upstream, spool, port=free_port(), **options)).start()
    stack.callback(proxy.stop)
    return f"http://127.0.0.1:{proxy.server.config.port}", proxy


def metric(base: str, name: str) -> float:
    for line in httpx.get(f"{base}/-/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


@pytest.mark.slow
def test_upstream_down_is_a_502_that_says_so_and_is_counted_and_logged_once(stack, tmp_path, caplog):
    base, _ = start(stack, f"http://127.0.0.1:{free_port()}", tmp_path / "spool")
    for _ in range(3):
        response = httpx.post(f"{base}/a2a/jsonrpc", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})
        assert response.status_code == 502
    assert "upstream agent at http://127.0.0.1:" in response.json()["error"]["message"]
    assert "is unreachable" in response.json()["error"]["message"]
    assert metric(base, 'archiver_record_upstream_errors_total{reason="unreachable"}') == 3.0
    told = [r.getMessage() for r in caplog.records if r.name == "archiver.record"]
    assert len(told) == 1  # at most one line per 10 s about one trouble
    assert told[0].endswith("is unreachable (ClientConnectorError) (1 since the last such line)")
    assert httpx.get(f"{base}/-/health").json()["status"] == "ok"


@pytest.mark.slow
def test_upstream_slower_than_the_read_timeout_is_a_504(stack, tmp_path, upstream):
    base, _ = start(stack, upstream.url, tmp_path / "spool", read_timeout=0.2)
    assert httpx.get(f"{base}/slow?seconds=0.01").json() == {"slept": True}
    response = httpx.get(f"{base}/slow?seconds=1")
    assert response.status_code == 504
    assert "did not answer in time" in response.json()["error"]["message"]
    assert metric(base, 'archiver_record_upstream_errors_total{reason="timeout"}') == 1.0


@pytest.mark.slow
def test_a_slow_stream_is_forwarded_event_by_event_as_it_comes(stack, tmp_path, upstream):
    base, _ = start(stack, upstream.url, tmp_path / "spool")
    with httpx.stream("GET", f"{base}/paced") as response:
        arrivals = [(time.monotonic(), chunk) for chunk in response.iter_raw()]
    stack.close()
    assert b"".join(chunk for _, chunk in arrivals) == b"".join(
        f"id: {n}\r\nevent: tick\r\ndata: {n}\r\n\r\n".encode() for n in range(4)
    )
    assert arrivals[-1][0] - arrivals[0][0] > 1.0  # the first event came 3 x 0.4 s before the last
    (stream,) = read_spool(tmp_path / "spool")["streams"].values()
    assert [event for _, _, event in stream["events"]] == [
        f"id: {n}\nevent: tick\ndata: {n}\n\n".encode() for n in range(4)
    ]
    assert stream["end"]["end"] == "complete"


def test_a_client_leaving_mid_stream_closes_the_upstream_stream_and_ends_the_recording(
    stack, tmp_path, upstream, closed
):
    base, _ = start(stack, upstream.url, tmp_path / "spool")
    received = b""
    with httpx.stream("GET", f"{base}/forever") as response:
        for chunk in response.iter_raw():
            received += chunk
            if received.count(b"data:") >= 3:
                break
    assert closed.wait(5), "the upstream stream was not closed after the client left"
    stack.close()
    (stream,) = read_spool(tmp_path / "spool")["streams"].values()
    assert stream["end"]["end"] == "client-disconnected"
    events = [event for _, _, event in stream["events"]]
    assert len(events) >= 3
    assert events == [f'data: {{"n": {n}}}\n\n'.encode() for n in range(len(events))]  # keep-alives left out
    assert stream["end"]["events"] == len(events)


def test_a_stream_open_when_the_proxy_stops_ends_as_proxy_shutdown(stack, tmp_path, upstream):
    _, proxy = start(stack, upstream.url, tmp_path / "spool")
    base = f"http://127.0.0.1:{proxy.server.config.port}"
    started = threading.Event()

    def listen():
        try:
            with httpx.stream("GET", f"{base}/forever") as response:
                for _ in response.iter_raw():
                    started.set()
        except httpx.HTTPError:
            pass

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert started.wait(5)
    proxy.server.config.timeout_graceful_shutdown = 0.2
    proxy.stop()
    listener.join(5)
    (stream,) = read_spool(tmp_path / "spool")["streams"].values()
    assert stream["end"]["end"] == "proxy-shutdown"
    assert stream["end"]["events"] == len(stream["events"]) > 0


def test_bodies_of_any_type_and_size_pass_whole_and_big_ones_are_not_recorded(stack, tmp_path, upstream):
    base, _ = start(stack, upstream.url, tmp_path / "spool", record_max_bytes=1000)

    def chunks():
        for _ in range(64):
            yield b"y" * 16384

    sent = b"y" * 16384 * 64
    big = httpx.post(f"{base}/echo?q=1", content=chunks(), headers={"content-type": "text/plain", "x-custom": "v"})
    assert (big.status_code, big.content, big.headers["x-echo"]) == (201, sent, "v")
    small = httpx.put(f"{base}/echo", content=b"\x00\x01 not json", headers={"content-type": "application/x-test"})
    assert (small.status_code, small.content) == (201, b"\x00\x01 not json")
    stack.close()
    truncated, raw = read_spool(tmp_path / "spool")["exchanges"]
    assert (truncated["method"], truncated["path"], truncated["query"], truncated["status"]) == (
        "POST",
        "/echo",
        "q=1",
        201,
    )
    assert truncated["request_truncated"] is truncated["response_truncated"] is True
    assert truncated["request"] is truncated["response"] is None
    assert "request_base64" not in truncated
    assert truncated["binding"] == "other"
    assert truncated["response_headers"] == {"content-type": "text/plain; charset=utf-8", "a2a-extensions": "urn:test"}
    assert "x-custom" not in truncated["request_headers"]
    assert base64.b64decode(raw["request_base64"]) == base64.b64decode(raw["response_base64"]) == b"\x00\x01 not json"
    assert raw["request"] is raw["response"] is None


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the full-disk case needs root")
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs could be mounted here: {mounted.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.slow
def test_a_full_spool_disk_loses_records_not_traffic_and_says_so(stack, tmp_path, upstream, small_disk):
    base, _ = start(stack, upstream.url, small_disk / "spool")
    for _ in range(12):
        response = httpx.get(f"{base}/big")
        assert (response.status_code, len(response.content)) == (200, 20011)
    deadline = time.monotonic() + 5
    while metric(base, 'archiver_record_unrecorded_total{reason="disk-full"}') == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    lost = metric(base, 'archiver_record_unrecorded_total{reason="disk-full"}')
    health = httpx.get(f"{base}/-/health").json()
    stack.close()
    assert lost > 0
    assert health["status"] == "degraded"
    assert health["unrecorded"]["disk-full"] == lost
    kept = read_spool(small_disk / "spool")["exchanges"]  # whole records only: each line parses
    assert len(kept) + lost == 12
    assert all(e["response"] == {"pad": "x" * 20000} for e in kept)


@pytest.mark.slow
def test_a_locked_archive_delays_the_ingest_not_the_traffic(stack, tmp_path, upstream):
    db = tmp_path / "archive.duckdb"
    Archive.open(str(db)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
         "time.sleep(60)", str(db)],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    stack.callback(holder.kill)
    assert holder.stdout.readline() == b"held\n"
    base, _ = start(stack, upstream.url, tmp_path / "spool", db=str(db), wait=0.1, segment_seconds=0.1)
    for n in range(5):
        assert httpx.post(f"{base}/echo", json={"n": n}).json() == {"n": n}
    deadline = time.monotonic() + 15
    while metric(base, "archiver_record_ingest_retries_total") == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(base, "archiver_record_ingest_retries_total") > 0
    assert httpx.get(f"{base}/-/health").json()["ingest_error"] is not None
    assert metric(base, "archiver_record_segments_ingested_total") == 0
    holder.kill()
    holder.wait()
    deadline = time.monotonic() + 20
    while metric(base, "archiver_record_segments_ingested_total") == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(base, "archiver_record_segments_ingested_total") > 0
    segments = sorted(str(path) for path in (tmp_path / "spool").glob("rec-*.jsonl"))
    stack.close()
    with Archive.open(str(db), read_only=True) as archive:
        stored = {row[0] for row in archive.con.execute("SELECT path FROM sources").fetchall()}
    assert set(segments) <= stored


@pytest.mark.slow
def test_status_codes_head_and_other_methods_pass_as_they_are(stack, tmp_path, upstream):
    base, _ = start(stack, upstream.url, tmp_path / "spool")
    calls = [("HEAD", "/big"), ("GET", "/nothing-here"), ("DELETE", "/echo")]
    for method, path in calls:
        direct, proxied = httpx.request(method, upstream.url + path), httpx.request(method, base + path)
        assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
        assert [h for h in proxied.headers.items() if h[0] != "date"] == [
            h for h in direct.headers.items() if h[0] != "date"
        ]
    stack.close()
    recorded = [
        (e["method"], e["path"], e["status"], e.get("response_base64"))
        for e in read_spool(tmp_path / "spool")["exchanges"]
    ]
    assert recorded == [
        ("HEAD", "/big", 200, None),
        ("GET", "/nothing-here", 404, base64.b64encode(b"Not Found").decode()),
        ("DELETE", "/echo", 405, base64.b64encode(b"Method Not Allowed").decode()),
    ]
