"""Every A2A dialect is read into the one canonical model, per object (by the compiled core)."""

from __future__ import annotations

import pytest

from tests.core_model import (
    AgentCard,
    ArtifactUpdate,
    ErrorResponse,
    Message,
    NotUnderstoodError,
    Request,
    StatusUpdate,
    Task,
    events_of,
    part_of,
    state_of,
    timestamp_of,
)

MT = "application/vnd.upperhand.citations+json"


def only(events, kind):
    assert len(events) == 1, events
    assert isinstance(events[0], kind), events
    return events[0]


def test_v10_jsonrpc_send_message_response_task():
    task = only(
        events_of(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "result": {
                    "task": {
                        "id": "t1",
                        "contextId": "c1",
                        "status": {"state": "TASK_STATE_COMPLETED"},
                        "artifacts": [{"artifactId": "a", "parts": [{"data": {"x": 1}, "mediaType": MT}]}],
                    }
                },
            }
        ),
        Task,
    )
    assert (task.task_id, task.context_id, task.status.state) == ("t1", "c1", "completed")
    part = task.artifacts[0].parts[0]
    assert (part.kind, part.data, part.media_type) == ("data", {"x": 1}, MT)


def test_v03_jsonrpc_kind_tagged_task_and_metadata_media_type():
    task = only(
        events_of(
            {
                "jsonrpc": "2.0",
                "id": "x",
                "result": {
                    "kind": "task",
                    "id": "t2",
                    "contextId": "c",
                    "status": {"state": "completed"},
                    "artifacts": [
                        {
                            "artifactId": "a",
                            "parts": [
                                {"kind": "data", "data": {"y": 2}, "metadata": {"mimeType": MT}},
                                {"kind": "text", "text": "hello"},
                            ],
                        }
                    ],
                },
            }
        ),
        Task,
    )
    data, text = task.artifacts[0].parts
    assert (data.kind, data.media_type, text.kind, text.text) == ("data", MT, "text", "hello")


def test_v03_rest_content_and_nested_data():
    message = only(
        events_of({"msg": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"data": {"data": {"share": 0.5}}}]}}),
        Message,
    )
    assert message.role == "agent"
    assert message.parts[0].data == {"share": 0.5}


def test_v03_rest_status_update_with_final_and_update_field():
    update = only(
        events_of(
            {
                "statusUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "status": {
                        "state": "TASK_STATE_WORKING",
                        "update": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "thinking"}]},
                    },
                    "final": False,
                }
            }
        ),
        StatusUpdate,
    )
    assert update.status.state == "working"
    assert update.status.message.parts[0].text == "thinking"


def test_v10_stream_events():
    artifact = only(
        events_of(
            {
                "artifactUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "append": True,
                    "lastChunk": True,
                    "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
                }
            }
        ),
        ArtifactUpdate,
    )
    assert (artifact.append, artifact.last_chunk, artifact.artifact.artifact_id) == (True, True, "a")


def test_v03_stream_events_kind_tagged():
    update = only(
        events_of(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "kind": "artifact-update",
                    "taskId": "t",
                    "contextId": "c",
                    "append": False,
                    "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]},
                },
            }
        ),
        ArtifactUpdate,
    )
    assert update.task_id == "t"


def test_v01_legacy_task_with_type_parts():
    task = only(
        events_of(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "id": "t01",
                    "sessionId": "s",
                    "status": {"state": "completed"},
                    "artifacts": [{"name": "answer", "index": 0, "parts": [{"type": "data", "data": {"n": 5}}]}],
                },
            }
        ),
        Task,
    )
    assert task.context_id == "s"
    assert task.artifacts[0].artifact_id == "index:0"
    assert task.artifacts[0].parts[0].data == {"n": 5}


def test_list_tasks_response_yields_each_task():
    events = events_of(
        {
            "tasks": [
                {"id": "a", "contextId": "c", "status": {"state": 3}},
                {"id": "b", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}},
            ],
            "nextPageToken": "",
        }
    )
    assert [(t.task_id, t.status.state) for t in events] == [("a", "completed"), ("b", "failed")]


def test_request_error_and_card():
    request = only(
        events_of(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "message/send",
                "params": {
                    "message": {
                        "kind": "message",
                        "messageId": "u",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "q"}],
                    }
                },
            }
        ),
        Request,
    )
    assert request.message.role == "user"
    error = only(
        events_of({"jsonrpc": "2.0", "id": 9, "error": {"code": -32001, "message": "Task not found"}}), ErrorResponse
    )
    assert error.code == -32001
    card = only(events_of({"name": "Insights", "skills": [], "capabilities": {}}), AgentCard)
    assert card.card["name"] == "Insights"


def test_store_row_shape_rebuilds_task():
    task = only(
        events_of(
            {
                "id": "t",
                "context_id": "c",
                "kind": "task",
                "status": '{"state": "completed"}',
                "artifacts": None,
                "history": "[]",
                "metadata": None,
                "protocol_version": None,
            }
        ),
        Task,
    )
    assert (task.task_id, task.status.state, task.artifacts) == ("t", "completed", [])


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"kind": "task"}},
        {"hello": "world"},
        [1, 2],
        {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}, "error": {"code": 1, "message": "m"}},
    ],
)
def test_not_understood(value):
    with pytest.raises(NotUnderstoodError):
        events_of(value)


def test_media_type_resolution_order():
    assert part_of({"data": {}, "mediaType": "a/1", "metadata": {"mediaType": "b/2"}}).media_type == "a/1"
    assert part_of({"data": {}, "metadata": {"mediaType": "b/2", "mimeType": "c/3"}}).media_type == "b/2"
    assert part_of({"data": {}, "metadata": {"mimeType": "c/3", "media_type": "d/4"}}).media_type == "c/3"
    assert part_of({"data": {}, "metadata": {"media_type": "d/4"}}).media_type == "d/4"
    assert part_of({"data": {}, "mediaType": "", "metadata": {"mimeType": "c/3"}}).media_type == "c/3"
    assert part_of({"data": {}}).media_type is None


def test_data_part_compat_is_unwrapped():
    part = part_of({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": True}})
    assert part.data == [1, 2]
    untouched = part_of({"kind": "data", "data": {"value": [1, 2]}})
    assert untouched.data == {"value": [1, 2]}


def test_part_with_two_content_fields_is_refused():
    with pytest.raises(NotUnderstoodError, match="more than one content field"):
        part_of({"text": "a", "data": {"b": 1}})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("TASK_STATE_INPUT_REQUIRED", "input-required"),
        ("input-required", "input-required"),
        ("TASK_STATE_CANCELLED", "canceled"),
        (5, "canceled"),
        ("", None),
        (None, None),
    ],
)
def test_states(raw, expected):
    assert state_of(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "2026-04-20T10:00:00Z",
        "2026-04-20T12:00:00+02:00",
        "2026-04-20T10:00:00",
        "2026-04-20T10:00:00.123Z",
        "2026-04-20T10:00:00.123456789Z",
        "2026-04-20 10:00:00",
        1776679200,  # epoch seconds
        1776679200123,  # epoch milliseconds (the JavaScript SDK's stores)
        "1776679200123",  # the same as digits
        {"seconds": "1776679200", "nanos": 123000000},  # a protobuf Timestamp object (ts-proto, useDate off)
    ],
)
def test_timestamps_in_every_form(raw):
    parsed = timestamp_of(raw)
    assert parsed is not None
    assert parsed.utcoffset() is not None
    assert parsed.replace(microsecond=0).isoformat() == "2026-04-20T10:00:00+00:00"


@pytest.mark.parametrize("raw", [{"seconds": "soon"}, {}, "tomorrow", True])
def test_what_is_no_timestamp_is_none(raw):
    assert timestamp_of(raw) is None


def test_eight_digits_are_a_compact_date_not_an_epoch():
    assert timestamp_of("20260420").isoformat() == "2026-04-20T00:00:00+00:00"


def test_file_parts_of_every_dialect_take_one_shape():
    v03 = part_of(
        {"kind": "file", "file": {"uri": "https://x/report.pdf", "name": "report.pdf", "mimeType": "application/pdf"}}
    )
    v03_rest = part_of({"file": {"fileWithUri": "https://x/report.pdf", "mimeType": "application/pdf"}})
    v10 = part_of({"url": "https://x/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"})
    raw = part_of({"raw": "aGVsbG8=", "mediaType": "text/plain"})
    assert v03.kind == v03_rest.kind == v10.kind == raw.kind == "file"
    assert v03.file == v10.file == {"uri": "https://x/report.pdf", "name": "report.pdf"}
    assert v03_rest.file == {"uri": "https://x/report.pdf"}
    assert v03.media_type == v03_rest.media_type == v10.media_type == "application/pdf"
    assert raw.file == {"bytes": "aGVsbG8="}
