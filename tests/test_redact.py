"""Secrets never leave the program: one redaction (`archiver.redact`) for messages, errors, start lines, logs,
spool records and the archive. Each test plants a password or token and looks for it where the issue found it."""

from __future__ import annotations

import asyncio
import base64
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.errors import ArchiveError, UsageError
from archiver.read.stores import parse
from archiver.record.serve import RecordOptions, start_line
from archiver.redact import MASK, known, redacted, redacted_query, without_userinfo
from archiver.store.backend import locate
from tests.record_support import ServerThread, TeeTransport, read_spool, sdk13_agent
from tests.servers import free_port
from tests.test_record import converse, start_proxy

PW = "Pw-s3kr1t-9f2"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"host=127.0.0.1 port=1 user=u password={PW} dbname=x", "host=127.0.0.1 port=1 user=u password=*** dbname=x"),
        (f"dbname=x password = '{PW} with \\' quote' user=u", "dbname=x password = '***' user=u"),
        (f"postgresql://u:{PW}@127.0.0.1:1/x", "postgresql://u:***@127.0.0.1:1/x"),
        (f'at "http://agentuser:{PW}@127.0.0.1:9/a"', 'at "http://agentuser:***@127.0.0.1:9/a"'),
        (f"GET /search?token={PW}&study=x HTTP/1.1", "GET /search?token=***&study=x HTTP/1.1"),
        (f"s3://b/k?X-Amz-Signature={PW}&X-Amz-Credential=AK/1", "s3://b/k?X-Amz-Signature=***&X-Amz-Credential=***"),
        (f"CREATE SECRET s (TYPE postgres, PASSWORD '{PW}')", "CREATE SECRET s (TYPE postgres, PASSWORD '***')"),
        (f"authorization: Bearer {PW}", "authorization: Bearer ***"),
        ("password=*** already", "password=*** already"),
        ("nothing secret: http://host:80/x?study=a", "nothing secret: http://host:80/x?study=a"),
    ],
)
def test_each_shape_of_secret_is_masked_and_the_rest_kept(text, shown):
    assert redacted(text) == shown
    assert redacted(redacted(text)) == shown


def test_a_secret_is_masked_by_its_value_from_the_environment_or_as_told(monkeypatch):
    monkeypatch.setenv("PGPASSWORD", "from-the-environment")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws/secret+key")
    known("told-at-parse")
    assert redacted("a from-the-environment b aws/secret+key c told-at-parse d x") == f"a {MASK} b {MASK} c {MASK} d x"


def test_urls_lose_their_userinfo_and_queries_their_secrets():
    assert without_userinfo(f"http://agentuser:{PW}@127.0.0.1:9000/a") == "http://127.0.0.1:9000/a"
    assert without_userinfo("https://token-only@agent.example/") == "https://agent.example/"
    assert redacted_query(f"historyLength=3&api_key={PW}") == "historyLength=3&api_key=***"
    assert redacted_query("a=1&b=%20x") == "a=1&b=%20x"  # byte for byte without a secret


def test_errors_never_show_a_password_however_a_driver_quoted_it():
    assert PW not in str(ArchiveError(f'Unable to connect to Postgres at "dbname=x password={PW}": refused'))
    store = parse(f"postgresql://reader:{PW}@127.0.0.1:1/agents")
    assert store.scrub(f"FATAL: password authentication failed ({PW})") == "FATAL: password authentication failed (***)"
    lake = locate(f"ducklake:postgres:dbname=x host=127.0.0.1 user=u password={PW}", "/tmp/data")
    assert PW not in lake.describe()
    assert PW not in lake.shown


@pytest.mark.parametrize(
    "db",
    [
        f"ducklake:postgres:dbname=x host=127.0.0.1 port=1 user=u password={PW}",
        f"ducklake:postgres:postgresql://u:{PW}@127.0.0.1:1/x",
    ],
)
def test_stats_of_an_unreachable_lake_names_it_without_its_password(db):
    run = CliRunner().invoke(main, ["stats", "--db", db, "--wait", "0"])
    assert run.exit_code != 0
    assert "127.0.0.1" in run.output
    assert PW not in run.output
    assert "Traceback" not in run.output


def test_a_record_upstream_is_shown_and_stored_without_its_userinfo(tmp_path):
    options = RecordOptions(f"http://agentuser:{PW}@127.0.0.1:9/", tmp_path / "spool", port=0, db=str(tmp_path / "a"))
    assert options.upstream == "http://127.0.0.1:9/"
    assert options.authorization == "Basic " + base64.b64encode(f"agentuser:{PW}".encode()).decode()
    assert PW not in repr(options)
    assert PW not in start_line(options)
    with pytest.raises(UsageError) as refused:
        RecordOptions(f"ftp://agentuser:{PW}@127.0.0.1:9/", tmp_path / "s")
    assert PW not in str(refused.value)


def test_the_environment_gives_the_upstream_its_credential(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHIVER_UPSTREAM_AUTHORIZATION", f"Bearer {PW}")
    options = RecordOptions("http://127.0.0.1:9/", tmp_path / "spool", port=0)
    assert options.authorization == f"Bearer {PW}"
    assert PW not in start_line(options)


def test_recorded_with_a_password_in_the_upstream_the_spool_archive_and_export_hold_no_password(tmp_path):
    """The issue's case end to end: `record --upstream http://agentuser:PW@...`, the upstream still gets the
    credential (as a header), and neither the spool, the archive file nor `export --raw --files` holds it."""
    seen: list[bytes | None] = []
    port = free_port()
    agent, _ = sdk13_agent("Quant agent", f"http://127.0.0.1:{port}")

    async def watched(scope, receive, send):
        if scope["type"] == "http":
            seen.append(dict(scope["headers"]).get(b"authorization"))
        await agent(scope, receive, send)

    with ExitStack() as stack:
        stack.enter_context(ServerThread(watched, port))
        proxy = start_proxy(stack, f"http://agentuser:{PW}@127.0.0.1:{port}", tmp_path / "spool")
        asyncio.run(converse(proxy, "JSONRPC", "1.0", False, TeeTransport()))
        metrics = httpx.get(f"{proxy}/-/metrics").text
    assert seen
    assert set(seen) == {b"Basic " + base64.b64encode(f"agentuser:{PW}".encode())}
    assert PW not in metrics
    spool = read_spool(tmp_path / "spool")
    assert {e["upstream"] for e in spool["exchanges"]} == {f"http://127.0.0.1:{port}"}
    for segment in (tmp_path / "spool").iterdir():
        assert PW.encode() not in segment.read_bytes(), segment

    db = tmp_path / "archive.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "spool")])
    exported = tmp_path / "exported"
    run = CliRunner().invoke(main, ["export", "--db", str(db), "--raw", "--files", str(exported)])
    assert run.exit_code == 0, run.output
    files = [path for path in exported.rglob("*") if path.is_file()]
    assert files
    for path in [db, *files, *Path(tmp_path).glob("archive.duckdb*")]:
        data = path.read_bytes()
        assert PW.encode() not in data, path
        assert base64.b64encode(f"agentuser:{PW}".encode()) not in data, path
