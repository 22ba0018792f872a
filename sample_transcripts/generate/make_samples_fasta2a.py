"""Samples made by pydantic's fasta2a 2.1.1 (an A2A server independent of the a2a SDKs).

Runs in its own venv (`fasta2a==2.1.1`, httpx): regenerate.sh makes it. The FastA2A app runs in this
process, with its InMemoryStorage, its InMemoryBroker and a Worker of ours, and is called through
httpx's ASGI transport, so every byte on the wire is the library's own:

- fasta2a-pulse/agent-card.json: GET /.well-known/agent-card.json.
- fasta2a-pulse/rpc.jsonl: a JSON-RPC log, one request or response a line: `message/send` (answered
  `{"task": ...}`: a v1.0-style wrapper with v0.3 method names and enum values) and `tasks/get`.
- fasta2a-pulse/stream.sse: the body of a `message/stream` (stream events of whole task snapshots and
  updates).
- fasta2a-pulse/storage-tasks.json: `json.dump(storage.tasks)`, the obvious way to save the in-memory
  storage: one JSON object keyed by task id, snake_case throughout (`context_id`, `artifact_id`,
  `media_type`).
- fasta2a-pydantic-ai/: a pydantic-ai agent served by fasta2a's bridge (`agent_to_a2a`, pydantic-ai-slim
  2.68.0), its model a `FunctionModel` (no network): the card, and `message/send` then `tasks/get`. The
  bridge writes a structured output as one data Part `{"result": ...}` with no media type, so such an agent
  cannot send a citation Part at all.

Task ids are made by `uuid.uuid4()` inside the library, and statuses stamped with `datetime.now()`: the
ids are drawn here from a seeded generator and the clock stopped, so that re-runs give the same bytes.
Nothing here reads the files back: the manifest fragment is written from the scenarios.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import random
import sys
import uuid
from pathlib import Path

import httpx
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.pydantic_ai import agent_to_a2a
from fasta2a.schema import AgentExtension, Artifact, Skill
from fasta2a.storage import InMemoryStorage
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    CIT_MT,
    CIT_NORTHWIND,
    CIT_NORTHWIND_CHANNEL,
    EXT_URI,
    OUT,
    Q_BASKET,
    Q_CHANNEL,
    Fragment,
    cit_summary,
    copy_entry,
)

AGENT = "Northwind Pulse Agent"
FOLDER = "fasta2a-pulse"
MADE_BY = "fasta2a 2.1.1 (FastA2A app, InMemoryStorage, InMemoryBroker) called through httpx"

# What the worker answers each question with: (text, data, citation or None).
ANSWERS = {
    "Mean basket size, Q1 2026?": ("Mean basket €42.70 in Q1 2026.", Q_BASKET, CIT_NORTHWIND),
    "Channel split, Q1 2026?": ("Stores take 71% of visits.", Q_CHANNEL, None),
    "Channel split, Q1 2026, with its source?": ("Stores take 71% of visits.", Q_CHANNEL, CIT_NORTHWIND_CHANNEL),
}


class FixedClock(datetime.datetime):
    """The clock the library stamps statuses with (`datetime.now()`), stopped: re-runs give the same bytes."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 4, 21, 9, 0, 3, tzinfo=tz)


def fixed_clock() -> None:
    for module in ["fasta2a.storage"]:
        sys.modules[module].datetime = FixedClock


def seeded_uuids(seed: int = 27) -> None:
    """Make the library's `uuid.uuid4()` draw from a seeded generator (stable task and context ids)."""
    draw = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=draw.getrandbits(128), version=4)


class PanelWorker(Worker):
    """Answers each question with a text Part, a data Part and, when it has one, a citation Part."""

    async def run_task(self, params):
        task = await self.storage.load_task(params["id"])
        await self.storage.update_task(task["id"], state="working")
        question = params["message"]["parts"][0]["text"]
        text, data, cited = ANSWERS[question]
        parts = [{"text": text, "media_type": "text/plain"}, {"data": data, "media_type": "application/json"}]
        if cited is not None:
            parts.append({"data": cited, "media_type": CIT_MT})
        artifact = Artifact(artifact_id=f"answer-{task['id'][:8]}", name="answer", parts=parts)
        await self.publish_artifact(task["id"], task["context_id"], artifact)
        await self.storage.update_task(task["id"], state="completed", new_artifacts=[artifact])

    async def cancel_task(self, params):
        await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history):
        return history

    def build_artifacts(self, result):
        return result


def question(text: str, message_id: str) -> dict:
    return {"role": "user", "parts": [{"text": text}], "messageId": message_id}


def rpc(request_id: int, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def until_done(client: httpx.AsyncClient, task_id: str, request_id: int) -> tuple[dict, dict]:
    """`tasks/get` until the task is completed: the last request and its response."""
    for _ in range(200):
        request = rpc(request_id, "tasks/get", {"id": task_id})
        response = (await client.post("/", json=request)).json()
        if response["result"]["status"]["state"] == "completed":
            return request, response
        await asyncio.sleep(0.01)
    raise RuntimeError(f"task {task_id} did not complete")


async def session(app: FastA2A, storage: InMemoryStorage) -> dict:
    """Every exchange of the scenario, as the library wrote it; returns (task id, context id) by question."""
    transport = httpx.ASGITransport(app=app)
    made = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://fasta2a.test") as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
        write_json(f"{FOLDER}/agent-card.json", card)
        log = []
        for number, text in enumerate(list(ANSWERS)[:2], start=1):
            request = rpc(number, "message/send", {"message": question(text, f"msg-nwp-q{number}")})
            response = (await client.post("/", json=request)).json()
            task_id = response["result"]["task"]["id"]
            made[text] = task_id
            log += [request, response, *await until_done(client, task_id, 100 + number)]
        write_lines(f"{FOLDER}/rpc.jsonl", log)
        text = list(ANSWERS)[2]
        request = rpc(3, "message/stream", {"message": question(text, "msg-nwp-q3")})
        async with client.stream("POST", "/", json=request) as streamed:
            body = b"".join([chunk async for chunk in streamed.aiter_bytes()])
        (OUT / FOLDER / "stream.sse").write_bytes(body)
        made[text] = next(task_id for task_id in storage.tasks if task_id not in made.values())
    write_json(f"{FOLDER}/storage-tasks.json", storage.tasks)
    return {text: (task_id, storage.tasks[task_id]["context_id"]) for text, task_id in made.items()}


def write_json(rel: str, value) -> None:
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_lines(rel: str, values: list) -> None:
    (OUT / rel).write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8")


async def run() -> dict:
    storage = InMemoryStorage()
    broker = InMemoryBroker()
    app = FastA2A(
        storage=storage,
        broker=broker,
        name=AGENT,
        url="http://fasta2a.test",
        description="Answers retail questions from the Northwind Retail Pulse, with Citations v1.",
        skills=[
            Skill(
                id="pulse",
                name="Retail pulse",
                description="Basket size and channel split",
                tags=["retail"],
                input_modes=["text/plain"],
                output_modes=["application/json", CIT_MT],
            )
        ],
        extensions=[AgentExtension(uri=EXT_URI, description="Citations v1", required=False)],
        default_output_modes=["text/plain", "application/json", CIT_MT],
    )
    worker = PanelWorker(broker=broker, storage=storage)
    async with app.task_manager, worker.run():
        return await session(app, storage)


PAI_AGENT = "Pulse Assistant"
PAI_FOLDER = "fasta2a-pydantic-ai"
Q_PAI = {"mean_visits_per_week": 1.8, "total": 612}


class Visits(BaseModel):
    mean_visits_per_week: float
    total: int


def visits_model(messages, info: AgentInfo) -> ModelResponse:
    """The model: a word, then the structured answer through the agent's output tool."""
    return ModelResponse(parts=[TextPart("Looking it up."), ToolCallPart(info.output_tools[0].name, Q_PAI)])


async def bridged() -> tuple[str, str]:
    """A pydantic-ai agent behind fasta2a's bridge: its card, a `message/send` and the `tasks/get` that finds
    it completed; returns the task's (id, context id)."""
    agent = Agent(FunctionModel(visits_model), output_type=Visits, name=PAI_AGENT)
    app = agent_to_a2a(agent, url="http://pydantic-ai.test", description="Visits a week, by a pydantic-ai agent.")
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://pydantic-ai.test") as client:
            write_json(f"{PAI_FOLDER}/agent-card.json", (await client.get("/.well-known/agent-card.json")).json())
            request = rpc(1, "message/send", {"message": question("Visits a week, Q1 2026?", "msg-pai-q1")})
            response = (await client.post("/", json=request)).json()
            task = response["result"]["task"]
            write_lines(f"{PAI_FOLDER}/rpc.jsonl", [request, response, *await until_done(client, task["id"], 2)])
    return task["id"], task["contextId"]


def fragment(made: dict) -> Fragment:
    fr = Fragment("fasta2a")
    fr.file(
        f"{FOLDER}/rpc.jsonl",
        "jsonl",
        ["fasta2a-jsonrpc"],
        MADE_BY,
        8,
        "message/send and tasks/get of two tasks, requests and responses a line each; the send answered "
        '{"task": ...} (a v1.0 wrapper with v0.3 method names and enums).',
    )
    fr.file(
        f"{FOLDER}/stream.sse",
        "sse",
        ["fasta2a-sse"],
        MADE_BY,
        3,
        "The body of one message/stream: the task's snapshot, its artifact and status events.",
    )
    fr.file(
        f"{FOLDER}/storage-tasks.json",
        "json",
        ["fasta2a-storage"],
        MADE_BY,
        1,
        "json.dump(storage.tasks): one JSON object keyed by task id, snake_case throughout.",
    )
    fr.agent(AGENT, f"{FOLDER}/agent-card.json", True, True)
    for text, (task_id, context_id) in made.items():
        _, data, cited = ANSWERS[text]
        citations = [cit_summary(cited)] if cited else []
        paths = [f"{FOLDER}/stream.sse" if "source" in text else f"{FOLDER}/rpc.jsonl", f"{FOLDER}/storage-tasks.json"]
        for path in paths:
            fr.add_copy(
                f"task:{task_id}",
                AGENT,
                copy_entry(path, "completed", True, citations, [data], 1),
                task_id=task_id,
                context_id=context_id,
            )
            if cited is None:
                fr.plant(
                    "uncited-result",
                    "error",
                    f"task:{task_id}",
                    path,
                    "fasta2a task answers the channel split (3 numbers) with no citation Part.",
                )
    return fr


def bridged_fragment(fr: Fragment, task_id: str, context_id: str) -> None:
    path = f"{PAI_FOLDER}/rpc.jsonl"
    fr.file(
        path,
        "jsonl",
        ["fasta2a-jsonrpc"],
        "fasta2a 2.1.1 pydantic-ai bridge (agent_to_a2a, pydantic-ai-slim 2.68.0)",
        4,
        "message/send and tasks/get of a pydantic-ai agent: its structured output one data Part "
        '{"result": ...} with no media type, its words an agent message in the history.',
    )
    fr.agent(PAI_AGENT, f"{PAI_FOLDER}/agent-card.json", False, False)
    fr.add_copy(
        f"task:{task_id}",
        PAI_AGENT,
        copy_entry(path, "completed", True, [], [{"result": Q_PAI}], 1),
        task_id=task_id,
        context_id=context_id,
    )
    fr.plant(
        "uncited-result",
        "error",
        f"task:{task_id}",
        path,
        "pydantic-ai agent behind fasta2a's bridge states 2 numbers; the bridge cannot send a citation Part.",
    )


def main():
    seeded_uuids()
    fixed_clock()
    made = asyncio.run(run())
    fr = fragment(made)
    bridged_fragment(fr, *asyncio.run(bridged()))
    fr.write()


if __name__ == "__main__":
    main()
