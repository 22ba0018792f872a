"""For the recording proxy's tests: a scripted agent of the real a2a-sdk 1.3.0, servers in threads on
loopback, a client transport that keeps the exact bytes the client sent and received, and a reader of spool
segments written from the spool contract (docs/record.md), independent of the proxy's own code."""

from __future__ import annotations

import asyncio
import base64
import threading
from pathlib import Path

import httpx
import orjson
import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution.simple_request_context_builder import SimpleRequestContextBuilder
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette

from tests.record_ids import Counted, TaskIds
from tests.servers import free_port

CIT_MT = "application/vnd.upperhand.citations+json"
CITATION = {
    "study": "Brand tracker",
    "period": "W6",
    "base": {"name": "All adults", "n": 412},
    "source": {"table": "tracker", "column": "aware", "function": "share"},
}
BAD_CITATION = {"study": "Brand tracker", "period": "W6", "base": {"name": "All adults"}, "source": CITATION["source"]}
TS = {"working": "2026-04-21T09:00:01Z", "completed": "2026-04-21T09:00:03Z"}


class ServerThread:
    """An ASGI app served by uvicorn in a thread, on a free loopback port."""

    def __init__(self, app, port: int | None = None) -> None:
        self.port = port or free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error", lifespan="auto")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        while not self.server.started:
            assert self.thread.is_alive(), "the server did not start"
            threading.Event().wait(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def data(value, media_type=None):
    part = pb.Part(data=ParseDict(value, struct_pb2.Value()))
    if media_type:
        part.media_type = media_type
    return part


class Scripted(AgentExecutor):
    """Answers by the user's first word: `message`, `lost-type` (a message), `task`, `uncited`, `long N` (a task
    whose artifact comes in N chunks), sleeping `delay` seconds before each event."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def execute(self, context, event_queue):
        word, *rest = context.message.parts[0].text.split()
        if word in ("message", "lost-type"):
            parts = [pb.Part(text="Awareness is 42%."), data({"share": 0.42})]
            parts.append(data(CITATION, CIT_MT) if word == "message" else data(CITATION))
            reply = pb.Message(
                message_id=f"reply-{context.message.message_id}",
                context_id=context.context_id,
                role=pb.Role.ROLE_AGENT,
                parts=parts,
            )
            await event_queue.enqueue_event(reply)
            return
        updater = TaskUpdater(
            event_queue, context.task_id, context.context_id, message_id_generator=Counted(context.task_id)
        )
        if not context.current_task:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        await asyncio.sleep(self.delay)
        working = updater.new_agent_message([pb.Part(text="working")])
        await updater.update_status(pb.TaskState.TASK_STATE_WORKING, message=working, timestamp=TS["working"])
        chunks = int(rest[0]) if word == "long" else 1
        for n in range(chunks):
            await asyncio.sleep(self.delay)
            await updater.add_artifact(
                _chunk(word, n), artifact_id="answer", name="answer", append=n > 0, last_chunk=n == chunks - 1
            )
        await asyncio.sleep(self.delay)
        await updater.update_status(pb.TaskState.TASK_STATE_COMPLETED, timestamp=TS["completed"])

    async def cancel(self, context, event_queue):
        raise NotImplementedError


def _chunk(word: str, n: int) -> list:
    if word == "long":
        return [pb.Part(text=f"chunk {n} " + "x" * 200)]
    parts = [data({"nps": 31 + n, "base": 412})]
    return [*parts, data(BAD_CITATION, CIT_MT)] if word == "task" else parts


def sdk13_agent(name: str, url: str, delay: float = 0.0):
    """A Starlette app of the a2a-sdk 1.3.0 (card, JSON-RPC and REST, each with the v0.3 compat binding) around
    the `Scripted` agent, and its card. Every id and time it answers with derives from the request, so two
    fresh agents answer alike."""
    card = ParseDict(
        {
            "name": name,
            "description": "A scripted agent for the recording proxy's tests",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": f"{url}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": f"{url}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            ],
            "capabilities": {"streaming": True, "pushNotifications": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["application/json", CIT_MT],
            "skills": [{"id": "quant", "name": "Numbers", "description": "numbers", "tags": ["survey"]}],
        },
        pb.AgentCard(),
    )
    handler = DefaultRequestHandler(
        Scripted(delay),
        InMemoryTaskStore(),
        card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        request_context_builder=SimpleRequestContextBuilder(task_id_generator=TaskIds()),
    )
    routes = (
        create_agent_card_routes(card)
        + create_jsonrpc_routes(handler, "/a2a/jsonrpc", enable_v0_3_compat=True)
        + create_rest_routes(handler, enable_v0_3_compat=True, path_prefix="/a2a/rest")
    )
    return Starlette(routes=routes), card


class TeeTransport(httpx.AsyncBaseTransport):
    """Passes requests on, keeping each request's body and the response bytes exactly as the client read them."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.log: list[dict] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        entry = {"method": request.method, "path": request.url.path, "request": body, "status": response.status_code,
                 "content_type": response.headers.get("content-type", ""), "response": b""}  # fmt: skip
        self.log.append(entry)

        async def tee():
            async for chunk in response.stream:
                entry["response"] += chunk
                yield chunk

        return httpx.Response(
            response.status_code, headers=response.headers, stream=_Stream(tee(), response.stream), request=request
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks, inner) -> None:
        self.chunks, self.inner = chunks, inner

    async def __aiter__(self):
        async for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


ENVELOPE = b": a2a-record "


def read_spool(folder: Path) -> dict:
    """The closed segments of a spool, read per the contract: {"exchanges": [envelope...], "streams":
    {exchange id: {"opens": [envelope...], "events": [(seq, time, event bytes)], "end": envelope}}}."""
    exchanges, streams = [], {}
    for path in sorted(folder.glob("rec-*")):
        if path.name.endswith(".open"):
            continue
        text = path.read_bytes()
        if path.suffix == ".jsonl":
            exchanges += [orjson.loads(line) for line in text.splitlines()]
        else:
            _read_stream_segment(text, streams)
    return {"exchanges": exchanges, "streams": streams}


def _read_stream_segment(text: bytes, streams: dict) -> None:
    lines = text.split(b"\n")
    assert lines[-1] == b"", "a stream segment ends with a newline"
    i = 0
    while i < len(lines) - 1:
        line = lines[i]
        assert line.startswith(ENVELOPE), f"line {i + 1} is no envelope: {line[:80]!r}"
        envelope = orjson.loads(line[len(ENVELOPE) :])
        kind, exchange = envelope["kind"], envelope["exchange"]
        i += 1
        if kind == "stream-open":
            stream = streams.setdefault(exchange, {"opens": [], "events": [], "end": None})
            stream["opens"].append(envelope)
        elif kind == "event":
            end = lines.index(b"", i)
            streams[exchange]["events"].append((envelope["seq"], envelope["time"], b"\n".join(lines[i:end]) + b"\n\n"))
            i = end + 1
        else:
            assert kind == "stream-end", kind
            streams[exchange]["end"] = envelope


def sse_events(raw: bytes) -> list[bytes]:
    """The events of an SSE body as a client received it: blocks ended by a blank line, comments left out."""
    text = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    events = []
    for block in text.split(b"\n\n"):
        lines = [line for line in block.split(b"\n") if line and not line.startswith(b":")]
        if lines:
            events.append(b"\n".join(lines) + b"\n\n")
    return events


def body_of(envelope: dict, key: str) -> object:
    """What the spool says a body was: its JSON, or its base64 bytes, or None."""
    if envelope.get(key) is not None:
        return envelope[key]
    raw = envelope.get(f"{key}_base64")
    return base64.b64decode(raw) if raw else None
