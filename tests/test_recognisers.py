"""Each recogniser reads the shape it knows (real traffic from sample_transcripts/, or a shape of
shared/spec/a2a-dialects.md) into exact events and passes other shapes by; the registry's order settles
an object that two recognisers would both take."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from archiver import _core
from archiver.read.containers import GZIP_LIMIT, RECORD_LIMIT, SourceFile, is_sqlite, sqlite_rows
from tests.core_model import (
    AgentCard,
    Artifact,
    ArtifactUpdate,
    Message,
    NotUnderstoodError,
    Part,
    Status,
    StatusUpdate,
    Task,
    payload_events,
    recognise,
)
from tests.transcripts import CITATIONS_MT, SAMPLES


def sample(path: str, index: int = 0):
    """Record `index` of a sample file, read and decoded by the core as ingest reads it (a task-store row
    as its columns)."""
    source = SourceFile.on_disk(str(SAMPLES / path))
    if is_sqlite(source):
        _, raw, _why = sqlite_rows(source)[index]
        return orjson.loads(raw)
    _, _, records = _core.read_records_of(os.fsencode(source.fs_path), None, path, RECORD_LIMIT, GZIP_LIMIT)
    payload = records[index][6]
    return _core.decode_json(payload)


def recogniser(name: str):
    """The registry's recogniser `name`, alone: None when it passes an object by."""
    return lambda obj: recognise(name, obj)


store_row = recogniser("store_row")
js_client_object = recogniser("js_client_object")
kind_tagged = recogniser("kind_tagged")
one_of = recogniser("one_of")
task_list = recogniser("task_list")
agent_card = recogniser("agent_card")
bare_update = recogniser("bare_update")
bare_object = recogniser("bare_object")
RECOGNISERS_FOLDER = Path(__file__).resolve().parent.parent / "archiver/core/src/understand/recognisers"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


V1_TASK = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}


def test_store_row_reads_a_task_store_row():
    row = sample("legacy-funnel/task-store.sqlite", 1)
    citation = {
        "study": "Northwind Retail Pulse",
        "period": "2026-Q1",
        "base": {"name": "Loyalty-card shoppers", "n": 612.0},
        "weight": "unweighted",
        "source": {"table": "nw_pulse_long", "column": "channel", "function": "extractShare"},
    }
    channels = [
        {"name": "store", "share": 0.71},
        {"name": "click_and_collect", "share": 0.18},
        {"name": "delivery", "share": 0.11},
    ]
    assert store_row(row) == [
        Task(
            "task-fnl-db-channel",
            "ctx-funnel-db",
            Status("completed", at("2026-04-21T09:00:03")),
            artifacts=[
                Artifact("art-channel", "channel", [Part("data", data={"channels": channels})]),
                Artifact("art-channel-citation", "citation", [Part("data", data=citation, media_type=CITATIONS_MT)]),
            ],
            history=[
                Message(
                    "msg-fnl-db-102",
                    "user",
                    [Part("text", text="Channel split, Q1?")],
                    context_id="ctx-funnel-db",
                    task_id="task-fnl-db-channel",
                )
            ],
        )
    ]
    assert store_row(V1_TASK) is None


def test_kind_tagged_reads_a_v03_stream_event():
    event = sample("legacy-funnel/stream-v03.sse", 4)["result"]
    assert kind_tagged(event) == [
        StatusUpdate("task-fnl-sse-channel", "ctx-funnel-sse", Status("completed", at("2026-04-21T09:00:03")))
    ]
    assert kind_tagged(V1_TASK) is None
    assert kind_tagged({**V1_TASK, "kind": ["task"]}) is None


def test_one_of_reads_a_v10_stream_response():
    event = sample("versant-insights/rest-stream-v1.sse", 1)
    assert one_of(event) == [
        StatusUpdate("task-vrs-rest-nps-main", "ctx-versant-drop", Status("working", at("2026-04-21T09:00:01")))
    ]
    assert one_of(V1_TASK) is None
    assert one_of({"task": V1_TASK, "message": {"messageId": "m"}}) is None
    with pytest.raises(NotUnderstoodError, match="statusUpdate is not an object"):
        one_of({"statusUpdate": "done"})


def test_task_list_reads_a_list_tasks_response():
    body = sample("versant-insights/rest-list-tasks.json")
    answer = Message(
        "task-vrs-rest-nps-main-agent-msg-1",
        "agent",
        [
            Part("text", text="NPS is +31 among category buyers (Wave 14)."),
            Part("data", data={"nps": 31.0, "promoters": 0.49, "detractors": 0.18, "total": 940.0}),
        ],
        context_id="ctx-versant-drop",
        task_id="task-vrs-rest-nps-main",
    )
    question = Message(
        "msg-vrs-rest-002",
        "user",
        [Part("text", text="NPS among category buyers?")],
        context_id="ctx-versant-drop",
        task_id="task-vrs-rest-nps-main",
    )
    assert task_list(body) == [
        Task(
            "task-vrs-rest-nps-main",
            "ctx-versant-drop",
            Status("completed", at("2026-04-21T09:00:03"), answer),
            history=[question],
        )
    ]
    assert task_list({"tasks": [V1_TASK, "t2"]}) == []
    assert task_list(V1_TASK) is None


def test_agent_card_reads_a_served_card():
    card = sample("legacy-funnel/agent-card.json")
    assert agent_card(card) == [AgentCard(card)]
    assert agent_card({"name": "not a card", "status": {}}) is None


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (  # v0.1 TaskStatusUpdateEvent: {"id", "status", "final"}
            {"id": "t01", "status": {"state": "completed"}, "final": True},
            StatusUpdate("t01", None, Status("completed")),
        ),
        (  # a bare v1.0 TaskStatusUpdateEvent
            {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}},
            StatusUpdate("t", "c", Status("working")),
        ),
        (  # a bare v1.0 TaskArtifactUpdateEvent
            {
                "taskId": "t",
                "contextId": "c",
                "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
                "append": True,
            },
            ArtifactUpdate("t", "c", Artifact("a", None, [Part("text", text="x")]), append=True),
        ),
    ],
)
def test_bare_update_reads_untagged_stream_events(obj, expected):
    assert bare_update(obj) == [expected]


def test_bare_update_passes_a_task_by():
    assert bare_update(V1_TASK) is None


def test_bare_object_reads_a_v01_task_and_a_v10_message():
    task = sample("legacy-funnel/v01-tasks-send.json")[1]["result"]
    citation = {
        "study": "Northwind Retail Pulse",
        "period": "2025-Q2",
        "base": {"name": "Loyalty-card shoppers", "n": 530},
        "weight": "unweighted",
        "source": {"table": "nw_pulse_long", "column": "basket_size", "function": "extractMean"},
    }
    parts = [
        Part("text", text="Mean basket €39.90 (Q2 2025)."),
        Part("data", data={"mean_basket_eur": 39.9, "median_basket_eur": 33.0, "total": 530}),
        Part("data", data=citation, media_type=CITATIONS_MT, metadata={"mediaType": CITATIONS_MT}),
    ]
    assert bare_object(task) == [
        Task(
            "task-fnl-v01-basket",
            "sess-fnl-v01",
            Status("completed", at("2025-07-02T10:15:00")),
            artifacts=[Artifact("index:0", "basket", parts)],
        )
    ]
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}
    assert bare_object(message) == [Message("m", "agent", [Part("text", text="hi")])]
    assert bare_object({"name": "x", "skills": []}) is None


def test_order_settles_shapes_two_recognisers_take():
    v01_update = {"id": "t01", "status": {"state": "completed"}, "final": True}
    assert isinstance(bare_object(v01_update)[0], Task)  # alone, the looser guess reads it as a Task
    assert payload_events(v01_update) == bare_update(v01_update)
    row = sample("legacy-funnel/task-store.sqlite", 1)
    assert row["kind"] == "task"
    with pytest.raises(NotUnderstoodError, match="a task status is not an object"):
        kind_tagged(row)  # the `kind` tag alone would refuse it: its status is JSON text
    assert payload_events(row) == store_row(row)
    # The JavaScript client's task list: the list reader alone reads its Parts as undecodable.
    listed = sample("kestrel-mobility/client-objects.jsonl", 7)
    assert {part.kind for task in task_list(listed) for part in task.status.message.parts} == {"unknown"}
    assert payload_events(listed) == js_client_object(listed)
    assert {part.kind for task in payload_events(listed) for part in task.status.message.parts} == {"text", "data"}


def test_every_recogniser_module_is_registered_once_in_order():
    modules = {path.stem for path in RECOGNISERS_FOLDER.glob("*.rs")} - {"mod"}
    registered = _core.recogniser_names()
    assert sorted(registered) == sorted(modules)
    assert registered == [
        "store_row",
        "js_client_object",
        "kind_tagged",
        "one_of",
        "task_list",
        "go_stored_task",
        "agent_card",
        "push_config",
        "python_a2a_native",
        "bare_update",
        "bare_object",
        "task_request",
        "keyed_by_id",
    ]
