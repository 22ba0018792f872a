"""`archiver record`: the real a2a-sdk 1.3.0 server and client through the recording proxy (JSON-RPC, REST,
SSE streaming; v1.0 and the v0.3 compat binding). The client's results through the proxy are the same bytes
as over a direct connection, and the spool, read per its contract, holds exactly what the client received."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

import httpx
import orjson
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import ParseDict

from archiver.record.serve import ProxyThread, RecordOptions
from tests.record_support import ServerThread, TeeTransport, read_spool, sdk13_agent, sse_events
from tests.servers import free_port

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def stack():
    with ExitStack() as opened:
        yield opened


def start_agent(stack: ExitStack, name: str = "Quant agent", delay: float = 0.0) -> ServerThread:
    port = free_port()
    app, _ = sdk13_agent(name, f"http://127.0.0.1:{port}", delay)
    return stack.enter_context(ServerThread(app, port))


def start_proxy(stack: ExitStack, upstream: str, spool: Path, **options) -> str:
    proxy = ProxyThread(RecordOptions(upstream, spool, port=free_port(), **options)).start()
    stack.callback(proxy.stop)
    return f"http://127.0.0.1:{proxy.server.config.port}"


def stopped(stack: ExitStack) -> None:
    """Stop the servers and the proxy (which closes its segments)."""
    stack.close()


CASES = [
    ("JSONRPC", "1.0", False),
    ("JSONRPC", "1.0", True),
    ("HTTP+JSON", "1.0", False),
    ("HTTP+JSON", "1.0", True),
    ("JSONRPC", "0.3", False),
    ("JSONRPC", "0.3", True),
    ("HTTP+JSON", "0.3", False),
    ("HTTP+JSON", "0.3", True),
]


async def converse(base: str, binding: str, version: str, streaming: bool, tee: TeeTransport) -> list[bytes]:
    """The scripted conversation through the SDK's own client; each result it returned, serialised."""
    async with httpx.AsyncClient(transport=tee) as http:
        card = ParseDict((await http.get(f"{base}/.well-known/agent-card.json")).json(), pb.AgentCard())
        path = "/a2a/jsonrpc" if binding == "JSONRPC" else "/a2a/rest"
        del card.supported_interfaces[:]
        card.supported_interfaces.append(
            pb.AgentInterface(url=base + path, protocol_binding=binding, protocol_version=version)
        )
        config = ClientConfig(httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding])
        client = ClientFactory(config).create(card)
        results = []
        for n, words in enumerate(["message", "task", "long 5", "uncited", "lost-type"]):
            message = pb.Message(message_id=f"m{n}", context_id=f"ctx{n}", role=pb.Role.ROLE_USER,
                                 parts=[pb.Part(text=words)])  # fmt: skip
            sent = client.send_message(pb.SendMessageRequest(message=message))
            results += [event.SerializeToString(deterministic=True) async for event in sent]
        task = await client.get_task(pb.GetTaskRequest(id="task-ctx1"))
        results.append(task.SerializeToString(deterministic=True))
        hook = pb.TaskPushNotificationConfig(task_id="task-ctx1", id="hook-1", url="http://127.0.0.1:9/hook", token="t")
        created = await client.create_task_push_notification_config(hook)
        got = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id="task-ctx1", id="hook-1")
        )
        results += [created.SerializeToString(deterministic=True), got.SerializeToString(deterministic=True)]
        if (binding, version) != ("HTTP+JSON", "0.3"):  # the SDK's v0.3 REST client cannot list them
            listed = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id="task-ctx1")
            )
            results.append(listed.SerializeToString(deterministic=True))
        return results


@pytest.mark.slow
@pytest.mark.parametrize(("binding", "version", "streaming"), CASES)
def test_sdk_client_through_the_proxy_gets_what_it_gets_directly_and_the_spool_holds_it(
    stack, tmp_path, binding, version, streaming
):
    direct, upstream = start_agent(stack), start_agent(stack)
    proxy = start_proxy(stack, upstream.url, tmp_path / "spool")
    direct_results = asyncio.run(converse(direct.url, binding, version, streaming, TeeTransport()))
    tee = TeeTransport()
    proxied_results = asyncio.run(converse(proxy, binding, version, streaming, tee))
    stopped(stack)

    assert proxied_results == direct_results
    push_calls = 2 if (binding, version) == ("HTTP+JSON", "0.3") else 3  # create, get (, list)
    assert len(direct_results) == (19 if streaming else 6) + push_calls
    spool = read_spool(tmp_path / "spool")
    assert not list((tmp_path / "spool").glob("*.open"))
    streams = list(spool["streams"].values())
    exchanges = spool["exchanges"]
    sent_unary = [entry for entry in tee.log if not entry["content_type"].startswith("text/event-stream")]
    sent_streams = [entry for entry in tee.log if entry["content_type"].startswith("text/event-stream")]
    assert len(exchanges) == len(sent_unary)
    assert len(streams) == len(sent_streams)
    for envelope, entry in zip(exchanges, sent_unary, strict=True):
        assert (envelope["method"], envelope["path"], envelope["status"]) == (entry["method"], entry["path"], 200)
        assert envelope["response"] == orjson.loads(entry["response"])
        assert envelope["request"] == (orjson.loads(entry["request"]) if entry["request"] else None)
    assert exchanges[0]["binding"] == "card"
    assert {e["binding"] for e in exchanges[1:-push_calls]} == {"jsonrpc" if binding == "JSONRPC" else "rest"}
    assert [e["binding"] for e in exchanges[-push_calls:]] == ["push-config"] * push_calls
    assert {e["protocol"] for e in exchanges[1:]} == {version}
    for stream, entry in zip(streams, sent_streams, strict=True):
        assert [seq for seq, _, _ in stream["events"]] == list(range(len(stream["events"])))
        assert [event for _, _, event in stream["events"]] == sse_events(entry["response"])
        assert stream["opens"][0]["request"] == orjson.loads(entry["request"])
        assert stream["opens"][0]["protocol"] == version
        # an SDK client may close a stream on its final event, before the agent's end of stream reaches the proxy
        assert stream["end"]["end"] in ("complete", "client-disconnected")
        assert stream["end"]["events"] == len(stream["events"])


@pytest.mark.slow
def test_live_conformance_counts_each_violation_per_agent_and_writes_one_alert_line(stack, tmp_path):
    upstream = start_agent(stack, name="Northwind quant")
    proxy = start_proxy(stack, upstream.url, tmp_path / "spool", alerts=tmp_path / "alerts.jsonl")
    asyncio.run(converse(proxy, "JSONRPC", "1.0", True, TeeTransport()))  # also a tasks/get of task-ctx1
    metrics = httpx.get(f"{proxy}/-/metrics").text
    stopped(stack)

    alerts = [orjson.loads(line) for line in (tmp_path / "alerts.jsonl").read_bytes().splitlines()]
    assert [(a["rule"], a["result"], a["severity"]) for a in alerts] == [
        ("invalid-citation", "task:task-ctx1", "error"),
        ("uncited-result", "task:task-ctx3", "error"),
        ("citation-type-lost", "message:reply-m4", "error"),
    ]
    assert {a["agent"] for a in alerts} == {"Northwind quant"}
    assert alerts[0]["detail"] == (
        'citation Part 1 of artifact "answer" in task task-ctx1 fails Citations v1: base.n is missing'
    )
    assert alerts[1]["detail"] == 'task task-ctx3 states 2 numbers in artifact "answer" and carries no citation Part'
    assert alerts[2]["detail"] == (
        "data Part 2 of message reply-m4 in message reply-m4 carries a citation's fields (study, period, base, "
        "source) but no media type, so consumers do not recognise it as a citation"
    )
    for rule in ("invalid-citation", "uncited-result", "citation-type-lost"):
        assert f'archiver_record_violations_total{{agent="Northwind quant",rule="{rule}"}} 1.0' in metrics


@pytest.mark.slow
def test_the_card_passes_unchanged_unless_asked_to_point_at_the_proxy(stack, tmp_path):
    upstream = start_agent(stack)
    plain = start_proxy(stack, upstream.url, tmp_path / "plain")
    rewriting = start_proxy(stack, upstream.url, tmp_path / "rewriting", rewrite_card=True)
    direct = httpx.get(f"{upstream.url}/.well-known/agent-card.json")
    through = httpx.get(f"{plain}/.well-known/agent-card.json")
    rewritten = httpx.get(f"{rewriting}/.well-known/agent-card.json").json()
    assert through.content == direct.content
    assert [(k, v) for k, v in through.headers.items() if k != "date"] == [
        (k, v) for k, v in direct.headers.items() if k != "date"
    ]
    assert [i["url"] for i in rewritten["supportedInterfaces"]] == [f"{rewriting}/a2a/jsonrpc", f"{rewriting}/a2a/rest"]
    assert {k: v for k, v in rewritten.items() if k != "supportedInterfaces"} == {
        k: v for k, v in direct.json().items() if k != "supportedInterfaces"
    }


@pytest.mark.slow
def test_segments_rotate_by_size_and_a_long_stream_continues_in_the_next(stack, tmp_path):
    upstream = start_agent(stack)
    proxy = start_proxy(stack, upstream.url, tmp_path / "spool", segment_bytes=4000)
    tee = TeeTransport()
    asyncio.run(converse(proxy, "HTTP+JSON", "1.0", True, tee))
    stopped(stack)

    names = sorted(path.name for path in (tmp_path / "spool").glob("rec-*"))
    assert len([n for n in names if n.endswith(".sse")]) > 3
    assert all(n.startswith("rec-") and n.split("-")[3][:6].isdigit() for n in names)
    assert [n.split("-")[3] for n in names] == sorted(n.split("-")[3] for n in names)  # written in name order
    long = read_spool(tmp_path / "spool")["streams"]
    stream = next(s for s in long.values() if s["opens"][0]["request"]["message"]["parts"][0]["text"] == "long 5")
    assert len(stream["opens"]) > 1
    assert [o.get("continued", False) for o in stream["opens"]] == [False] + [True] * (len(stream["opens"]) - 1)
    assert [seq for seq, _, _ in stream["events"]] == list(range(8))
    sent = next(e for e in tee.log if b"long 5" in e["request"])
    assert [event for _, _, event in stream["events"]] == sse_events(sent["response"])


def test_segments_close_by_age(stack, tmp_path):
    upstream = start_agent(stack)
    proxy = start_proxy(stack, upstream.url, tmp_path / "spool", segment_seconds=0.2)
    httpx.get(f"{proxy}/.well-known/agent-card.json")
    for _ in range(100):
        if list((tmp_path / "spool").glob("*.jsonl")):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert [p.suffix for p in (tmp_path / "spool").glob("rec-*")] == [".jsonl"]  # closed while the proxy runs
