"""The JavaScript SDK client's objects ($case/value oneofs) read as the ProtoJSON they stand for (by the
compiled core)."""

from __future__ import annotations

import base64

import pytest

from tests.core_model import ArtifactUpdate, Message, StatusUpdate, Task, events_of, part_of, proto_json_of

MT = "application/vnd.upperhand.citations+json"
CITATION = {"study": "S", "period": "P", "base": {"name": "B", "n": 12}, "source": {"table": "t", "column": "c"}}


def js_part(case, value, media_type="", filename=""):
    return {"content": {"$case": case, "value": value}, "filename": filename, "mediaType": media_type}


def js_message(parts, role=2):
    return {
        "messageId": "m1",
        "contextId": "c1",
        "taskId": "",
        "role": role,
        "parts": parts,
        "extensions": [],
        "referenceTaskIds": [],
    }


JS_TASK = {
    "id": "t1",
    "contextId": "c1",
    "status": {"state": 3, "timestamp": "2026-06-15T08:00:03.000Z"},
    "artifacts": [
        {
            "artifactId": "a1",
            "name": "modes",
            "description": "",
            "parts": [
                js_part("text", "Modes"),
                js_part("data", {"total": 4}),
                js_part("raw", {"type": "Buffer", "data": list(b"a,b\n")}, "text/csv", "m.csv"),
                js_part("url", "https://x.example/m.png", "image/png", "m.png"),
                js_part("data", CITATION, MT),
            ],
            "extensions": [],
        }
    ],
    "history": [js_message([js_part("text", "Modes?")], role=1)],
}
PROTO_TASK = {
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-06-15T08:00:03.000Z"},
    "artifacts": [
        {
            "artifactId": "a1",
            "name": "modes",
            "parts": [
                {"text": "Modes"},
                {"data": {"total": 4}},
                {"raw": base64.b64encode(b"a,b\n").decode(), "filename": "m.csv", "mediaType": "text/csv"},
                {"url": "https://x.example/m.png", "filename": "m.png", "mediaType": "image/png"},
                {"data": CITATION, "mediaType": MT},
            ],
        }
    ],
    "history": [{"messageId": "m1", "contextId": "c1", "role": "ROLE_USER", "parts": [{"text": "Modes?"}]}],
}


def test_a_client_task_reads_as_its_proto_json():
    assert events_of(JS_TASK) == events_of(PROTO_TASK)
    kinds = [part.kind for part in events_of(JS_TASK)[0].artifacts[0].parts]
    assert kinds == ["text", "data", "file", "file", "data"]


@pytest.mark.parametrize(
    ("case", "value", "kind"),
    [
        ("task", JS_TASK, Task),
        ("message", js_message([js_part("data", CITATION, MT)]), Message),
        (
            "statusUpdate",
            {"taskId": "t1", "contextId": "c1", "status": {"state": 2, "message": js_message([js_part("text", "x")])}},
            StatusUpdate,
        ),
        (
            "artifactUpdate",
            {
                "taskId": "t1",
                "contextId": "c1",
                "artifact": {
                    "artifactId": "a1",
                    "name": "",
                    "description": "",
                    "parts": [js_part("data", CITATION, MT)],
                },
                "append": True,
                "lastChunk": True,
            },
            ArtifactUpdate,
        ),
    ],
)
def test_stream_and_send_responses_are_payload_oneofs(case, value, kind):
    (event,) = events_of({"payload": {"$case": case, "value": value}})
    assert isinstance(event, kind)
    if kind is ArtifactUpdate:
        assert (event.append, event.last_chunk, event.artifact.parts[0].media_type) == (True, True, MT)


def test_a_bare_message_and_a_list_response():
    (message,) = events_of(js_message([js_part("data", CITATION, MT)]))
    assert (message.role, message.task_id, message.parts[0].kind) == ("agent", None, "data")
    tasks = events_of({"tasks": [JS_TASK], "nextPageToken": "", "pageSize": 50, "totalSize": 1})
    assert tasks == events_of(PROTO_TASK)


def test_data_and_metadata_keep_their_own_case_keys():
    own = {"$case": "mine", "value": 1}
    (message,) = events_of(js_message([{**js_part("data", {"x": own}), "metadata": {"k": own}}]))
    assert (message.parts[0].data, message.parts[0].metadata) == ({"x": own}, {"k": own})


def test_uint8array_bytes_as_a_browser_writes_them():
    part = proto_json_of(js_message([js_part("raw", {"0": 97, "1": 98})]))["parts"][0]
    assert part["raw"] == base64.b64encode(b"ab").decode()


def test_other_dialects_are_not_client_objects():
    assert proto_json_of(PROTO_TASK) is None
    assert proto_json_of({"kind": "task", "id": "t", "status": {"state": "completed"}}) is None
    assert proto_json_of({"payload": {"task": PROTO_TASK}}) is None


@pytest.mark.parametrize(
    ("part", "data"),
    [
        ({"data": {"data": {"value": [1, 2]}}}, [1, 2]),  # v0.3 REST from the JS 1.x server: no flag
        ({"data": {"data": {"value": 5}}}, 5),
        ({"data": {"data": {"value": {"a": 1}}}}, {"value": {"a": 1}}),  # an object: the agent's own
        ({"kind": "data", "data": {"value": [1, 2]}}, {"value": [1, 2]}),  # v0.3 JSON-RPC keeps the flag
        ({"kind": "data", "data": {"value": {"a": 1}}, "metadata": {"data_part_compat": True}}, {"a": 1}),
        ({"data": {"value": [1, 2]}, "mediaType": "application/json"}, {"value": [1, 2]}),  # v1.0: any JSON
    ],
)
def test_v03_rest_value_wrapping_is_unwrapped(part, data):
    assert part_of(part).data == data
