"""The recording proxy between the other SDKs' clients and servers: the Python a2a-sdk 0.3.26 (in a venv of its
own, made once and cached) and the JavaScript SDK (@a2a-js/sdk 1.3.0, installed from tests/js/package-lock.json
with `npm ci`). Each talks JSON-RPC and REST, unary and streaming; its results through the proxy are the same
bytes as over a direct connection, and the spool holds exactly the bytes its client received."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import orjson
import pytest

from archiver.record.serve import ProxyThread, RecordOptions
from tests.record_support import read_spool, sse_events
from tests.servers import free_port
from tests.venvs import cached_python

HERE = Path(__file__).parent
SDK03 = "a2a-sdk[http-server]==0.3.26"
STABLE = {**os.environ, "PYTHONHASHSEED": "0", "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
"""upb, protobuf's default backend, iterates a Struct's keys in a per-process random order; the pure-Python
backend keeps their order, so that two servers answer alike."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def sdk03_python() -> str:
    """The python of a venv holding a2a-sdk 0.3.26 (made with pip the first time)."""
    return cached_python("sdk03", [SDK03, "httpx", "uvicorn"], key=SDK03)


@pytest.fixture(scope="session")
def js_peer() -> list[str]:
    """The command running tests/js/peer.mjs, its packages installed with `npm ci` when the lock file changed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are needed for the JavaScript SDK (Debian: apt-get install nodejs npm)")
    folder = HERE / "js"
    lock = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    stamp = folder / "node_modules" / ".installed-lock"
    if not stamp.exists() or stamp.read_text() != lock:
        installed = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True)
        if installed.returncode != 0:
            pytest.skip(f"npm ci failed in tests/js: {installed.stderr.strip()[-300:]}")
        stamp.write_text(lock)
    return ["node", str(folder / "peer.mjs")]


def serve(stack: ExitStack, command: list[str]) -> str:
    port = free_port()
    process = subprocess.Popen([*command, "serve", str(port)], stdout=subprocess.DEVNULL, env=STABLE)
    stack.callback(process.wait)
    stack.callback(process.kill)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{command} serve exited with {process.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{command} serve did not listen in 30 s")


def converse(command: list[str], base: str, out: Path) -> dict:
    subprocess.run([*command, "converse", base, str(out)], check=True, timeout=120, env=STABLE)
    return json.loads(out.read_text())


def through_proxy(command: list[str], tmp_path: Path) -> tuple[dict, dict, dict]:
    """(direct conversation, proxied conversation, spool) against two fresh servers of the same peer; the proxy
    rewrites the card's URLs to its own, and the spool notes where in `spool["moved"]` (from, to)."""
    with ExitStack() as stack:
        direct, upstream = serve(stack, command), serve(stack, command)
        options = RecordOptions(upstream, tmp_path / "spool", port=free_port(), rewrite_card=True)  # clients stay on it
        proxy = ProxyThread(options).start()
        stack.callback(proxy.stop)
        base = f"http://127.0.0.1:{proxy.port}"
        plain = converse(command, direct, tmp_path / "direct.json")
        proxied = converse(command, base, tmp_path / "proxied.json")
    return plain, proxied, {**read_spool(tmp_path / "spool"), "moved": (upstream, base)}


def assert_spool_holds_what_the_client_received(wire: list[dict], spool: dict) -> None:
    unary = [entry for entry in wire if not entry["content_type"].startswith("text/event-stream")]
    streams = [entry for entry in wire if entry["content_type"].startswith("text/event-stream")]
    assert len(spool["exchanges"]) == len(unary)
    assert len(spool["streams"]) == len(streams)
    upstream, proxy = spool["moved"]
    for envelope, entry in zip(spool["exchanges"], unary, strict=True):
        assert (envelope["method"], envelope["path"]) == (entry["method"], entry["path"])
        received = orjson.loads(base64.b64decode(entry["response"]))
        if envelope["binding"] == "card":  # the agent's own card; the client got it with the proxy's URLs
            assert upstream in orjson.dumps(envelope["response"]).decode()
            received = orjson.loads(orjson.dumps(received).decode().replace(proxy, upstream))
        assert envelope["response"] == received
        request = base64.b64decode(entry["request"])
        assert envelope["request"] == (orjson.loads(request) if request else None)
    for stream, entry in zip(spool["streams"].values(), streams, strict=True):
        assert [event for _, _, event in stream["events"]] == sse_events(base64.b64decode(entry["response"]))
        assert stream["opens"][0]["request"] == orjson.loads(base64.b64decode(entry["request"]))
        # an SDK client may close a stream on its final event, before the agent's end of stream reaches the proxy
        assert stream["end"]["end"] in ("complete", "client-disconnected")


def test_python_sdk_03_through_the_proxy(sdk03_python, tmp_path):
    command = [sdk03_python, str(HERE / "sdk03_peer.py")]
    plain, proxied, spool = through_proxy(command, tmp_path)
    assert len(plain["results"]) == 15
    assert proxied["results"][1:] == plain["results"][1:]  # the card names its own server
    assert_spool_holds_what_the_client_received(proxied["wire"], spool)
    assert {e["protocol"] for e in spool["exchanges"][1:]} == {"0.3"}
    assert {s["opens"][0]["binding"] for s in spool["streams"].values()} == {"jsonrpc", "rest"}


def test_javascript_sdk_through_the_proxy(js_peer, tmp_path):
    """The 1.3.0 server (its v0.3 layer on) with the 1.3.0 client, then the 0.3.14 client."""
    plain, proxied, spool = through_proxy(js_peer, tmp_path)
    assert len(plain["results"]) == 33
    assert proxied["results"][1:] == plain["results"][1:]
    assert_spool_holds_what_the_client_received(proxied["wire"], spool)
    calls = [*spool["exchanges"], *(s["opens"][0] for s in spool["streams"].values())]
    assert {(e["binding"], e["protocol"]) for e in calls if e["binding"] != "card"} == {
        ("jsonrpc", "1.0"),
        ("rest", "1.0"),
        ("jsonrpc", "0.3"),
        ("rest", "0.3"),
    }
