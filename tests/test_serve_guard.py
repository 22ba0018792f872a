"""`archiver serve` against the web at large (issue 39): the `Host` it answers to (DNS rebinding), the `Origin`
of what has effects, the token kept out of `ps` and of the log, clients that never read their answer, and a
stop that leaves no thread inside DuckDB."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest
import uvicorn
from click.testing import CliRunner
from starlette.testclient import TestClient

from archiver.archive import Archive
from archiver.cli import main
from archiver.errors import UsageError
from archiver.serve import create_app
from archiver.serve.app import StoppingError, token_from
from archiver.serve.connections import Limits, bounded_protocol
from archiver.serve.guard import Hosts
from benchmarks.serve_stuck import stuck_client

from .serve_data import ROOT
from .servers import free_port

TOKEN = "tok-9f2c61d0e4"


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> str:
    """An archive of one task whose data Part has 60,000 rows: its `/result/t-big.json` is about 5 MB, more
    than loopback's socket buffers hold (4 MiB at most), so that an unread answer stays in the server."""
    folder = tmp_path_factory.mktemp("big")
    rows = [{"label": f"row {n}", "share": n / 60_000} for n in range(60_000)]
    task = {
        "kind": "task",
        "id": "t-big",
        "contextId": "ctx-big",
        "status": {"state": "completed", "timestamp": "2026-04-21T10:00:00Z"},
        "artifacts": [{"artifactId": "answer", "parts": [{"kind": "data", "data": {"rows": rows}}]}],
    }
    (folder / "big.json").write_text(json.dumps(task))
    db = str(folder / "big.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(folder / "big.json")], workers=1)
    return db


@pytest.fixture(scope="module")
def client(big):
    with TestClient(create_app(big), base_url="http://localhost") as client:
        yield client


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "0.0.0.0"])
def test_a_host_name_the_server_was_not_bound_to_is_refused(client, host):
    answer = client.get("/search.json?study=*", headers={"host": host})
    assert answer.status_code == 421
    assert "rows" not in answer.text


@pytest.mark.parametrize("host", ["", " ", "x" * 10_000, "evil.example:port", "a b"])
def test_a_request_without_a_host_name_is_a_400(client, host):
    assert client.get("/search.json?study=*", headers={"host": host}).status_code == 400


@pytest.mark.parametrize("host", ["localhost", "localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST."])
def test_loopback_names_are_answered(client, host):
    assert client.get("/search.json?study=*", headers={"host": host}).status_code == 200


def test_the_names_a_server_answers_to_are_those_it_was_bound_to():
    behind = Hosts.bound("127.0.0.1", "127.0.0.1", ["archive.example.com"])
    assert behind.allows("archive.example.com:443")
    assert not behind.allows("other.example.com")
    one = Hosts.bound("192.168.1.5", "192.168.1.5")
    assert one.allows("192.168.1.5:8765")
    assert one.allows("localhost")
    assert not one.allows("10.0.0.1")
    assert not one.allows("evil.example")
    every = Hosts.bound("0.0.0.0", "0.0.0.0")
    assert every.allows("10.0.0.1:8765")
    assert every.allows("[fe80::1]")  # an address cannot be rebound
    assert not every.allows("evil.example")


def test_a_reverse_proxys_name_is_answered_when_allowed(big):
    app = create_app(big, hosts=Hosts.bound("127.0.0.1", allowed=["archive.example.com"]))
    with TestClient(app, base_url="http://archive.example.com") as behind:
        assert behind.get("/index.json").status_code == 200
        assert behind.get("/index.json", headers={"host": "evil.example"}).status_code == 421


def test_what_has_effects_is_refused_from_another_sites_page(big):
    with TestClient(create_app(big, token=TOKEN), base_url="http://localhost:8765") as client:
        for origin in ("http://evil.example", "null", "http://localhost.evil.example:8765"):
            opened = client.get(f"/?token={TOKEN}", headers={"origin": origin}, follow_redirects=False)
            assert opened.status_code == 403, origin
            assert "set-cookie" not in opened.headers
            assert client.post("/", headers={"origin": origin}).status_code == 403
        same = client.get(f"/?token={TOKEN}", headers={"origin": "http://localhost:8765"}, follow_redirects=False)
        assert same.status_code == 303
        assert client.post("/").status_code == 405  # no origin: still read-only


def test_a_token_on_the_command_line_is_warned_of(tmp_path):
    """`--token` still works, but says that `ps` shows it and where to give it instead (here the run is refused
    before serving: a token and a token file both given)."""
    (tmp_path / "token").write_text(f"{TOKEN}\n")
    result = CliRunner().invoke(main, ["serve", "--token", TOKEN, "--token-file", str(tmp_path / "token")])
    assert result.exit_code == 2
    assert "warning: --token shows the token to every user of this machine (ps)" in result.stderr
    assert TOKEN not in result.output


def test_the_token_comes_from_a_file_or_the_environment_never_needing_the_command_line(tmp_path, monkeypatch):
    monkeypatch.delenv("ARCHIVER_SERVE_TOKEN", raising=False)
    monkeypatch.delenv("ARCHIVER_TOKEN", raising=False)
    assert token_from() is None
    monkeypatch.setenv("ARCHIVER_TOKEN", "older-name")
    assert token_from() == "older-name"
    monkeypatch.setenv("ARCHIVER_SERVE_TOKEN", "newer-name")
    assert token_from() == "newer-name"
    (tmp_path / "token").write_text(f"{TOKEN}\n")
    assert token_from(file=tmp_path / "token") == TOKEN
    assert token_from("a-token-given-as-an-argument") == "a-token-given-as-an-argument"
    with pytest.raises(UsageError, match="once"):
        token_from("a-token-given-as-an-argument", tmp_path / "token")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(UsageError, match="empty"):
        token_from(file=tmp_path / "empty")
    with pytest.raises(UsageError, match="cannot read"):
        token_from(file=tmp_path / "none")


def _get(url: str, **headers: str) -> int:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.mark.slow
@pytest.mark.parametrize("access_log", [True, False])
def test_the_token_is_in_no_process_list_or_log_and_sigint_stops_at_once(big, tmp_path, access_log):
    """`serve --token-file`: the token is not in the process's arguments, `?token=` is masked in its access
    log, a foreign Host is refused, and SIGINT ends it in seconds without DuckDB aborting the process. The
    access log is printed with `--access-log` only (issue 41: every request was printed)."""
    (tmp_path / "token").write_text(TOKEN)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARCHIVER_SERVE_TOKEN", None)
    env.pop("ARCHIVER_TOKEN", None)
    command = [sys.executable, "-m", "archiver", "serve", "--db", big, "--port", str(port)]
    command += ["--access-log"] if access_log else []
    server = subprocess.Popen(
        [*command, "--token-file", str(tmp_path / "token")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while _get_or_none(f"{base}/favicon.ico") is None:
            assert time.monotonic() < deadline, "serve did not start"
            assert server.poll() is None, "serve ended"
            time.sleep(0.2)
        assert TOKEN not in Path(f"/proc/{server.pid}/cmdline").read_bytes().decode(errors="replace")
        with pytest.raises(urllib.error.HTTPError, match="303"):
            urllib.request.build_opener(_NoRedirect).open(f"{base}/?token={TOKEN}", timeout=30)
        assert _get(f"{base}/index.json", Authorization=f"Bearer {TOKEN}") == 200
        assert _get(f"{base}/index.json", Authorization=f"Bearer {TOKEN}", Host="evil.example") == 421
        server.send_signal(signal.SIGINT)
        started = time.monotonic()
        server.wait(20)
        assert time.monotonic() - started < 15
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    output = server.stdout.read().decode(errors="replace")
    assert ("GET /?token=***" in output) == access_log
    assert ("GET /index.json" in output) == access_log
    assert TOKEN not in output
    assert "terminate called" not in output
    assert server.returncode == 130, output


def _get_or_none(url: str) -> int | None:
    try:
        return _get(url)
    except OSError:
        return None


def test_stopping_interrupts_the_queries_under_way(big):
    """No thread may be inside DuckDB as the process exits (it aborted with `terminate called without an
    active exception` when stopped during the start's warm-up): `stop` interrupts them and waits."""
    server = create_app(big).server
    failed: list[BaseException] = []

    def endless() -> None:
        try:
            with server.archive() as archive:
                archive.con.execute("SELECT count(*) FROM range(10000000000) a, range(1000) b").fetchall()
        except BaseException as exc:
            failed.append(exc)

    reading = threading.Thread(target=endless)
    reading.start()
    deadline = time.monotonic() + 30
    while not server._cursors:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.2)
    assert server.stop(10)
    reading.join(10)
    assert not reading.is_alive()
    assert len(failed) == 1
    assert isinstance(failed[0], duckdb.InterruptException)
    assert server._shared is None  # closed
    with pytest.raises(StoppingError):
        server._join()


class _Served:
    def __init__(self, db: str, limits: Limits) -> None:
        self.protocol = bounded_protocol(limits)
        self.port = free_port()
        config = uvicorn.Config(
            create_app(db), host="127.0.0.1", port=self.port, log_level="warning", http=self.protocol
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> _Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def _until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.slow
def test_a_client_that_never_reads_its_answer_is_dropped(big):
    with _Served(big, Limits(send_seconds=1.0)) as served:
        base = f"http://127.0.0.1:{served.port}"
        assert _get(f"{base}/result/t-big.json") == 200  # the answer is kept: the clients below get it at once
        clients = [stuck_client(served.port, "/result/t-big.json") for _ in range(6)]
        try:
            assert _until(lambda: len(served.protocol.live) == 6, 30)
            assert _until(lambda: not served.protocol.live, 30), "the stuck clients were not dropped"
            assert _get(f"{base}/index.json") == 200
        finally:
            for sock in clients:
                sock.close()


@pytest.mark.slow
def test_unread_answers_past_the_budget_drop_the_slowest_readers(big):
    """With a budget of 2 MiB of unread answers, 6 clients that never read a 5 MB answer cannot all stay:
    the ones past their share are dropped at once, not after `send_seconds`."""
    with _Served(big, Limits(send_seconds=600, send_bytes=2 * 2**20)) as served:
        base = f"http://127.0.0.1:{served.port}"
        assert _get(f"{base}/result/t-big.json") == 200
        clients = [stuck_client(served.port, "/result/t-big.json") for _ in range(6)]
        try:
            assert _until(lambda: len(served.protocol.live) < 6, 30), "no slow reader was dropped"
            time.sleep(1)
            assert sum(c.unread() for c in served.protocol.live) <= 2 * 2**20 + 2**20  # a chunk and a buffer over
            assert _get(f"{base}/index.json") == 200
        finally:
            for sock in clients:
                sock.close()
