"""Samples made by python-a2a 0.5.10 (an A2A library independent of the a2a SDKs).

Runs in its own venv (`python-a2a==0.5.10`): regenerate.sh makes it. Its A2AServer runs in this process
as the Flask app the library builds (`create_flask_app`), called through Flask's test client, so every
byte is the library's own:

- python-a2a-harbour/agent-card.json: GET /.well-known/agent-card.json.
- python-a2a-harbour/rpc.jsonl: a `tasks/send` request and its response, a line each: v0.1-style Tasks
  (`sessionId`, `type`-tagged Parts, artifacts with neither id nor name), the citation Part's media type
  in `metadata.mediaType` (python-a2a's Parts have no media type field of their own).
- python-a2a-harbour/stream.sse: the body of a `tasks/sendSubscribe`: whole task snapshots as
  `event: update` and `event: complete`, with no JSON-RPC envelope.
- python-a2a-harbour/messages.jsonl: the agent's replies as the library writes them for the A2A wire
  (`Message.to_google_a2a()`): bare agent messages whose only id is `metadata.message_id`.

Message ids are made by `uuid.uuid4()` inside the library, and statuses stamped with `datetime.now()`: the
ids are drawn here from a seeded generator and the clock stopped, so that re-runs give the same bytes.
Nothing here reads the files back: the manifest fragment is written from the scenarios.
"""

from __future__ import annotations

import datetime
import json
import random
import sys
import uuid
from pathlib import Path

from python_a2a import A2AServer, AgentCard, AgentSkill, FunctionResponseContent, Message, MessageRole, TextContent
from python_a2a.models import TaskState, TaskStatus
from python_a2a.server.http import create_flask_app

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CIT_MT, CIT_NORTHWIND_Q4, EXT_URI, OUT, Q_BASKET_Q4, Fragment, cit_summary, copy_entry

AGENT = "Harbour Insights Agent"
FOLDER = "python-a2a-harbour"
MADE_BY = "python-a2a 0.5.10 (A2AServer as its Flask app, called through Flask's test client)"
Q_VISITS_WEEK = {"mean_visits_per_week": 1.6, "total": 587}
SOURCED = "Mean basket size, Q4 2025, with its source?"


class FixedClock(datetime.datetime):
    """The clock the library stamps statuses with (`datetime.now()`), stopped: re-runs give the same bytes."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 4, 21, 9, 0, 3, tzinfo=tz)


def fixed_clock() -> None:
    for module in ["python_a2a.models.task", "python_a2a.server.a2a_server"]:
        sys.modules[module].datetime = FixedClock


def seeded_uuids(seed: int = 27) -> None:
    """Make the library's `uuid.uuid4()` draw from a seeded generator (stable message ids)."""
    draw = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=draw.getrandbits(128), version=4)


def visits(reply_to: Message | None = None) -> Message:
    """The agent's answer as a function response: numbers, and nowhere to put a citation's media type."""
    return Message(
        content=FunctionResponseContent(name="visits_per_week", response=Q_VISITS_WEEK),
        role=MessageRole.AGENT,
        parent_message_id=reply_to.message_id if reply_to else None,
        conversation_id="conv-hbr-1",
    )


class HarbourServer(A2AServer):
    """Answers with a function response (python-a2a's own path), or, asked for a source, writes the task's
    artifact itself: `type`-tagged Parts, the citation typed in its metadata."""

    def handle_message(self, message):
        return visits(message)

    def handle_task(self, task):
        if question(task.message or {}) != SOURCED:
            return super().handle_task(task)
        task.artifacts = [
            {
                "parts": [
                    {"type": "text", "text": "Mean basket €44.10 in Q4 2025."},
                    {"type": "data", "data": Q_BASKET_Q4},
                    {"type": "data", "data": CIT_NORTHWIND_Q4, "metadata": {"mediaType": CIT_MT}},
                ]
            }
        ]
        task.status = TaskStatus(state=TaskState.COMPLETED)
        return task


def question(message: dict) -> str | None:
    """The text a task's message asks, in the A2A shape (`parts`) or python-a2a's own (`content`)."""
    parts = message.get("parts") or [message.get("content") or {}]
    return parts[0].get("text")


def card() -> AgentCard:
    return AgentCard(
        name=AGENT,
        description="Answers retail questions from the Northwind Retail Pulse.",
        url="http://python-a2a.test",
        capabilities={"streaming": True, "extensions": [{"uri": EXT_URI, "required": False}]},
        default_output_modes=["text/plain", "application/json", CIT_MT],
        skills=[
            AgentSkill(name="pulse", description="Basket size and visits", output_modes=["application/json", CIT_MT])
        ],
    )


def send(task_id: str, text: str, message_id: str) -> dict:
    message = {"role": "user", "parts": [{"type": "text", "text": text}], "metadata": {"message_id": message_id}}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/send",
        "params": {"id": task_id, "sessionId": "sess-hbr-1", "message": message},
    }


def write(rel: str, data: bytes) -> None:
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def lines(values: list) -> bytes:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode()


def main():
    seeded_uuids()
    fixed_clock()
    client = create_flask_app(HarbourServer(agent_card=card())).test_client()
    write(f"{FOLDER}/agent-card.json", client.get("/.well-known/agent-card.json").data)
    request = send("task-hbr-basket", SOURCED, "msg-hbr-q1")
    write(f"{FOLDER}/rpc.jsonl", lines([request, client.post("/tasks/send", json=request).get_json()]))
    request = send("task-hbr-visits", "Visits a week, Q4 2025?", "msg-hbr-q2")
    request["method"] = "tasks/sendSubscribe"
    write(f"{FOLDER}/stream.sse", client.post("/a2a/tasks/stream", json=request).data)
    replies = [visits(), Message(content=TextContent(text="Ask me about Q4 2025."), role=MessageRole.AGENT)]
    write(f"{FOLDER}/messages.jsonl", lines([reply.to_google_a2a() for reply in replies]))
    write(f"{FOLDER}/messages-native.jsonl", lines([reply.to_dict() for reply in replies]))
    fragment(replies).write()


def fragment(replies: list[Message]) -> Fragment:
    fr = Fragment("python_a2a")
    fr.file(
        f"{FOLDER}/rpc.jsonl",
        "jsonl",
        ["python-a2a-jsonrpc"],
        MADE_BY,
        2,
        "A tasks/send request and its response: sessionId, type-tagged Parts, the citation's media type in "
        "metadata.mediaType.",
    )
    fr.file(
        f"{FOLDER}/stream.sse",
        "sse",
        ["python-a2a-sse"],
        MADE_BY,
        2,
        "A tasks/sendSubscribe: whole task snapshots as event: update and event: complete, no JSON-RPC envelope.",
    )
    fr.file(
        f"{FOLDER}/messages.jsonl",
        "jsonl",
        ["python-a2a-messages"],
        MADE_BY,
        2,
        "The agent's replies as Message.to_google_a2a() writes them: the only id in metadata.message_id.",
    )
    fr.file(
        f"{FOLDER}/messages-native.jsonl",
        "jsonl",
        ["python-a2a-native"],
        MADE_BY,
        2,
        "The same replies as Message.to_dict() writes them by default: python-a2a's own format, one "
        "`content` object tagged by type, the ids beside it.",
    )
    fr.agent(AGENT, f"{FOLDER}/agent-card.json", True, True)
    fr.add_copy(
        "task:task-hbr-basket",
        AGENT,
        copy_entry(f"{FOLDER}/rpc.jsonl", "completed", True, [cit_summary(CIT_NORTHWIND_Q4)], [Q_BASKET_Q4], 1),
        task_id="task-hbr-basket",
        context_id="sess-hbr-1",
    )
    answered = {"function_response": {"name": "visits_per_week", "response": Q_VISITS_WEEK}}
    fr.add_copy(
        "task:task-hbr-visits",
        AGENT,
        copy_entry(f"{FOLDER}/stream.sse", "completed", True, [], [answered], 0),
        task_id="task-hbr-visits",
        context_id="sess-hbr-1",
    )
    fr.plant(
        "uncited-result",
        "error",
        "task:task-hbr-visits",
        f"{FOLDER}/stream.sse",
        "python-a2a task answers visits a week (2 numbers) as a function response, with no citation Part.",
    )
    numbers, text = replies
    fr.add_copy(
        f"message:{numbers.message_id}",
        AGENT,
        copy_entry(f"{FOLDER}/messages.jsonl", None, True, [], [answered], 0),
        message_id=numbers.message_id,
    )
    fr.plant(
        "uncited-result",
        "error",
        f"message:{numbers.message_id}",
        f"{FOLDER}/messages.jsonl",
        "python-a2a agent message (its only id in metadata.message_id) states 2 numbers with no citation Part.",
    )
    fr.add_copy(
        f"message:{text.message_id}",
        AGENT,
        copy_entry(f"{FOLDER}/messages.jsonl", None, True, [], [], 1),
        message_id=text.message_id,
    )
    native = f"{FOLDER}/messages-native.jsonl"  # the same two messages in python-a2a's own format
    fr.add_copy(f"message:{numbers.message_id}", AGENT, copy_entry(native, None, True, [], [answered], 0))
    fr.plant(
        "uncited-result",
        "error",
        f"message:{numbers.message_id}",
        native,
        "The same python-a2a message in its own format (Message.to_dict()): 2 numbers, no citation Part.",
    )
    fr.add_copy(f"message:{text.message_id}", AGENT, copy_entry(native, None, True, [], [], 1))
    return fr


if __name__ == "__main__":
    main()
