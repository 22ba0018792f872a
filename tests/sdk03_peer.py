"""The Python a2a-sdk 0.3.x on either side of the recording proxy; run in its own venv (tests/test_record_peers.py
makes it). Not imported by the tests.

    python sdk03_peer.py serve PORT        the SDK's JSON-RPC and REST apps around a scripted agent
    python sdk03_peer.py converse URL OUT  the SDK's clients talk to the agent at URL; writes OUT (JSON): the
                                           results they returned and the exact bytes of every exchange

Every id and time the agent answers with is fixed, so two fresh servers answer alike."""

from __future__ import annotations

import asyncio
import base64
import json
import sys

import httpx
import uvicorn
from a2a.client import ClientConfig, ClientFactory
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.agent_execution.request_context_builder import RequestContextBuilder
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    DataPart,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from record_ids import Counted, TaskIds  # this folder: the script's own

CIT_MT = "application/vnd.upperhand.citations+json"
CITATION = {"study": "Funnel", "period": "Q1", "base": {"name": "Shoppers", "n": 950},
            "source": {"table": "baskets", "column": "size", "function": "mean"}}  # fmt: skip
TS = {"submitted": "2026-03-01T10:00:00Z", "working": "2026-03-01T10:00:01Z", "completed": "2026-03-01T10:00:02Z"}


class Builder(RequestContextBuilder):
    async def build(self, params=None, task_id=None, context_id=None, task=None, context=None):
        return RequestContext(request=params, task_id=task_id, context_id=context_id, task=task, call_context=context,
                              task_id_generator=TaskIds())  # fmt: skip


def data(value, media_type=None):
    return Part(root=DataPart(data=value, metadata={"mediaType": media_type} if media_type else None))


class Scripted(AgentExecutor):
    async def execute(self, context, event_queue):
        ids = Counted(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id, message_id_generator=ids)
        if not context.current_task:
            status = TaskStatus(state=TaskState.submitted, timestamp=TS["submitted"])
            await event_queue.enqueue_event(Task(id=context.task_id, context_id=context.context_id, status=status,
                                                 history=[context.message]))  # fmt: skip
        working = updater.new_agent_message([Part(root=TextPart(text="working"))])
        await updater.update_status(TaskState.working, message=working, timestamp=TS["working"])
        for n in range(3):
            await updater.add_artifact([data({"basket": 41.5 + n}), data(CITATION, CIT_MT)], artifact_id="answer",
                                       name="answer", append=n > 0, last_chunk=n == 2)  # fmt: skip
        await updater.update_status(TaskState.completed, final=True, timestamp=TS["completed"])

    async def cancel(self, context, event_queue):
        raise NotImplementedError


def card(base: str) -> AgentCard:
    return AgentCard(
        name="Funnel test agent", description="A scripted agent for the recording proxy tests", version="0.3.0",
        url=f"{base}/a2a/jsonrpc", preferred_transport="JSONRPC",
        additional_interfaces=[AgentInterface(url=f"{base}/a2a/jsonrpc", transport="JSONRPC"),
                               AgentInterface(url=f"{base}/a2a/rest", transport="HTTP+JSON")],
        capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
        default_output_modes=["application/json", CIT_MT], skills=[],
    )  # fmt: skip


def serve(port: int) -> None:
    agent_card = card(f"http://127.0.0.1:{port}")
    handler = DefaultRequestHandler(Scripted(), InMemoryTaskStore(), request_context_builder=Builder())
    rpc = A2AStarletteApplication(agent_card, handler).build(rpc_url="/a2a/jsonrpc")
    rest = A2ARESTFastAPIApplication(agent_card, handler).build(rpc_url="/a2a/rest")

    async def app(scope, receive, send):
        await (rest if scope.get("path", "").startswith("/a2a/rest") else rpc)(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


class Tee(httpx.AsyncBaseTransport):
    def __init__(self):
        self.inner, self.wire = httpx.AsyncHTTPTransport(), []

    async def handle_async_request(self, request):
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        self.wire.append({
            "method": request.method,
            "path": request.url.path,
            "content_type": response.headers.get("content-type", ""),
            "request": base64.b64encode(body).decode(),
            "response": base64.b64encode(content).decode(),
        })  # fmt: skip
        return httpx.Response(response.status_code, headers=response.headers, content=content, request=request)


def _dumped(event):
    if isinstance(event, tuple):  # (task, update)
        return [item.model_dump(mode="json") if item is not None else None for item in event]
    return event.model_dump(mode="json")


async def converse(base: str, out: str) -> None:
    tee = Tee()
    results = []
    async with httpx.AsyncClient(transport=tee) as http:
        results.append((await http.get(f"{base}/.well-known/agent-card.json")).text)
        for transport in ("JSONRPC", "HTTP+JSON"):
            for streaming in (False, True):
                config = ClientConfig(httpx_client=http, streaming=streaming, supported_transports=[transport])
                client = ClientFactory(config).create(card(base))
                context = f"ctx-{transport}-{streaming}"
                message = Message(message_id=f"m-{context}", context_id=context, role=Role.user,
                                  parts=[Part(root=TextPart(text="task"))])  # fmt: skip
                results += [json.dumps(_dumped(event)) async for event in client.send_message(message)]
    with open(out, "w") as file:
        json.dump({"results": results, "wire": tee.wire}, file)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    else:
        asyncio.run(converse(sys.argv[2], sys.argv[3]))
