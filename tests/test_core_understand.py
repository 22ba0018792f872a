"""The compiled core's `understand` stage against the Python readers it replaces: the same decoded JSON
through both gives the same events, or the same quarantine reason.

Inputs: A2A objects of every dialect built by hypothesis (v0.1, v0.3 JSON-RPC and REST, v1.0 ProtoJSON,
JavaScript client objects, task-store rows, JSON-RPC requests, responses and errors, agent cards, spool
envelopes) with hostile values in every field; timestamps in every form; and every record of every
file under sample_transcripts/ and tests/.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver import _core
from archiver.read.containers import SourceFile, read_records
from archiver.read.decode import decode
from archiver.understand.dialects import task_of_store_row, timestamp_of
from archiver.understand.events import events_of
from archiver.understand.recorded import is_envelope, recorded_events

ROOT = Path(__file__).resolve().parent.parent
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EXAMPLES = int(os.environ.get("ARCHIVER_CORE_EXAMPLES", "30"))
"""Examples per generated test: few, for a suite under 20 s; set the variable to search harder."""
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


# --- comparing ----------------------------------------------------------------------------------------


def typed(value: Any) -> Any:
    """A value with its types spelled out, so that `1`, `1.0` and `True` (equal in Python) differ, and
    the order of a dict's keys counts."""
    if isinstance(value, dict):
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return ("list", [typed(item) for item in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def micros(value: Any) -> Any:
    """asdict's values with datetimes as microseconds since the epoch, as the core gives them."""
    if isinstance(value, datetime):
        return (value - EPOCH) // (value.resolution)
    if isinstance(value, dict):
        return {key: micros(item) for key, item in value.items()}
    if isinstance(value, list):
        return [micros(item) for item in value]
    return value


def event_dict(event: Any) -> dict:
    return {**micros(dataclasses.asdict(event)), "event": type(event).__name__}


def reason(exc: Exception) -> str:
    """The reason a record is quarantined with (`archiver.prepare._one_line`, before its whitespace and
    length are made one line)."""
    if isinstance(exc, (ValueError, TypeError)):
        return str(exc)
    return f"internal error ({type(exc).__name__}: {' '.join(str(exc).split()) or type(exc).__name__})"


def outcome(call, *args) -> tuple:
    try:
        result = call(*args)
    except RecursionError:
        raise
    except Exception as exc:
        return ("refused", reason(exc))
    return ("read", typed(result))


def python_events(value):
    return [event_dict(event) for event in events_of(value)]


def python_recorded(envelope, event=None):
    exchange, events = recorded_events(envelope, event)
    return exchange, [event_dict(e) for e in events]


def python_store_row(row):
    return event_dict(task_of_store_row(row))


def python_timestamp(value):
    found = timestamp_of(value)
    return None if found is None else micros(found)


def same(python_call, core_call, *args) -> None:
    expected = outcome(python_call, *args)
    got = outcome(core_call, *args)
    assert got == expected, f"input: {args!r}"


# --- values -------------------------------------------------------------------------------------------

WORDS = [
    "",
    "x",
    "1",
    "2",
    "user",
    "agent",
    "USER",
    "ROLE_AGENT",
    "role_user",
    "task",
    "message",
    "msg",
    "status-update",
    "artifact-update",
    "text",
    "data",
    "file",
    "Buffer",
    "working",
    "completed",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_INPUT_REQUIRED",
    "cancelled",
    "unspecified",
    "it's",
    'say "hi"',
    "é\n\x00\x85\u2028😀",
    "raw",
    "url",
    "value",
    "$case",
    "0",
    "01",
    "١٢",
    "²",
    "card",
    "other",
]
integers = st.one_of(
    st.integers(-3, 10), st.integers(-(2**63), 2**64), st.integers(-(2**80), 2**80), st.just(2**64 + 1)
)
floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 1.0, 2.0, 1e16]))
scalars = st.one_of(st.none(), st.booleans(), integers, floats, st.sampled_from(WORDS), st.text(max_size=6))
keys = st.one_of(st.sampled_from(WORDS), st.text(max_size=4))
any_json = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)


def hostile(good):
    """Mostly `good`, sometimes anything JSON can hold."""
    return st.one_of(good, good, good, any_json)


def obj(required: dict, optional: dict | None = None):
    """A dict with each required member (a strategy), some of the optional ones, and sometimes a stray."""
    return st.fixed_dictionaries(required, optional=optional or {}).flatmap(
        lambda found: st.dictionaries(keys, any_json, max_size=1).map(lambda extra: {**extra, **found}) | st.just(found)
    )


digits = st.integers(0, 9).map(str)
iso_strings = st.builds(
    lambda y, mo, d, sep, h, mi, s, frac, zone: f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}{zone}",
    st.integers(0, 10000),
    st.integers(0, 13),
    st.integers(0, 32),
    st.sampled_from(["T", " ", "t", "x", "é"]),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 60),
    st.sampled_from(["", ".", ".1", ".123", ".123456", ".1234567", ".9999999", ",5", ".12x"]),
    st.sampled_from(
        ["", "Z", "z", "+00:00", "-05:30", "+01", "+0100", "+23:59:59.999999", "+24:00", "+00:00:00.5", "+1", "-00:99"]
    ),
)
iso_variants = st.one_of(
    iso_strings,
    st.sampled_from(
        [
            "2024-06-15",
            "20240615",
            "20240615T101112",
            "2024-W24-6",
            "2024W246",
            "2024-W53",
            "2020-W53-1",
            "2024-166",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "9999-12-31T23:59:59.9999999Z",
            " 2024-06-15T10:11:12Z ",
            "2024-06-15T10:11:12.5+05:30",
            "2024-06-15T10:11",
            "2024-06-15T10",
            "2024-06-15T1011",
            "2024-06-15T10:11:12:5",
            "2024-06-15T10:11xZ",
            "1718000000",
            "1718000000000",
            " 1718000000 ",
            "١٧١٨٠٠٠٠٠٠",
            "¹718000000",
            "0000000000",
            "99999999999999999999999",
            "1" * 4400,
            "not a date",
            "",
            "  ",
            "2024-06-15T10:11:12\x00junk",
            "2024-06-15T10:11:12.123456\x00junk",
        ]
    ),
    st.text(alphabet="0123456789-:T.+Z W", min_size=7, max_size=30),
)
epoch_numbers = st.one_of(
    st.integers(-(10**13), 10**13),
    st.integers(99_999_999_990, 100_000_000_010),
    integers,
    st.floats(-1e13, 1e13),
    st.floats(allow_nan=False),
    st.sampled_from([1e11, 1e11 + 0.5, 253402300799.9999995, -62135596800.0000005]),
)
protobuf_times = st.fixed_dictionaries(
    {},
    optional={
        "seconds": st.one_of(
            epoch_numbers,
            st.sampled_from(["1718000000", " 1_718_000_000 ", "1e9", "nan", "inf", "x", "", True, None, 10**400]),
        ),
        "nanos": st.one_of(st.integers(-(10**9), 10**10), floats, st.sampled_from(["5", "nan", "-0", True, 0])),
    },
)
timestamps = st.one_of(iso_variants, epoch_numbers, protobuf_times, any_json)

states = hostile(
    st.sampled_from(
        [
            "submitted",
            "working",
            "completed",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_CANCELLED",
            "input_required",
            "unspecified",
            "",
            1,
            3,
            8,
            9,
            0,
            True,
            3.0,
        ]
    )
)
roles = hostile(st.sampled_from(["user", "agent", "ROLE_USER", "ROLE_AGENT", "Agent", 1, 2, 3, True, 2.0, "", None]))
ids = hostile(st.sampled_from(["t-1", "t-2", "m-1", "c-1", "", None, 7, 1.5, True, {"a": 1}, ["x"], "it's"]))
metadata = hostile(
    st.sampled_from(
        [
            {},
            {"mediaType": "application/json"},
            {"mimeType": "text/csv"},
            {"media_type": "x/y", "data_part_compat": True},
            {"data_part_compat": 1},
        ]
    )
)
media_types = hostile(st.sampled_from(["application/vnd.upperhand.citations+json", "text/plain", ""]))

buffers = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("Buffer"),
            "data": st.lists(st.one_of(st.integers(-1, 256), st.booleans(), floats), max_size=4),
        }
    ),
    st.dictionaries(st.sampled_from(["0", "1", "2", "10", "01", "٣", "²", "x"]), st.integers(-1, 256), max_size=4),
    st.lists(st.integers(0, 255), max_size=4),
    any_json,
)


def parts():
    return st.one_of(
        obj({"kind": st.just("text"), "text": hostile(st.sampled_from(["hello", ""]))}, {"metadata": metadata}),
        obj(
            {"type": st.sampled_from(["text", "data", "file"])}, {"text": any_json, "data": any_json, "file": any_json}
        ),
        obj(
            {"kind": st.sampled_from(["data", "", None, 0])},
            {"data": any_json, "type": st.sampled_from(["data", "x"]), "metadata": metadata, "mediaType": media_types},
        ),
        obj(
            {
                "data": st.one_of(
                    any_json, st.builds(lambda d: {"data": d}, any_json), st.builds(lambda d: {"value": d}, any_json)
                )
            },
            {"metadata": metadata, "mediaType": media_types, "media_type": media_types},
        ),
        obj(
            {
                "kind": st.just("file"),
                "file": st.one_of(
                    any_json,
                    obj(
                        {},
                        {
                            "uri": ids,
                            "bytes": ids,
                            "name": ids,
                            "mimeType": media_types,
                            "fileWithUri": ids,
                            "fileWithBytes": ids,
                            "mediaType": media_types,
                        },
                    ),
                ),
            },
            {"name": ids, "filename": ids},
        ),
        obj({"url": ids}, {"filename": ids, "name": ids, "mediaType": media_types}),
        obj({"raw": ids}, {"filename": ids, "mediaType": media_types}),
        obj({}, {"text": any_json, "data": any_json, "url": any_json, "content": any_json}),
        any_json,
    )


def part_lists():
    return hostile(st.lists(parts(), max_size=3))


def messages():
    return obj(
        {},
        {
            "messageId": ids,
            "message_id": ids,
            "role": roles,
            "parts": part_lists(),
            "content": part_lists(),
            "contextId": ids,
            "context_id": ids,
            "taskId": ids,
            "task_id": ids,
            "metadata": metadata,
            "kind": st.just("message"),
        },
    )


def statuses():
    return hostile(
        obj({}, {"state": states, "timestamp": timestamps, "message": hostile(messages()), "update": messages()})
    )


def artifacts():
    return obj(
        {},
        {
            "artifactId": ids,
            "artifact_id": ids,
            "index": ids,
            "name": ids,
            "parts": part_lists(),
            "metadata": metadata,
            "append": any_json,
            "lastChunk": any_json,
        },
    )


def tasks():
    return obj(
        {"id": ids},
        {
            "contextId": ids,
            "context_id": ids,
            "sessionId": ids,
            "status": statuses(),
            "artifacts": hostile(st.lists(artifacts(), max_size=2)),
            "history": hostile(st.lists(messages(), max_size=2)),
            "metadata": metadata,
            "kind": st.sampled_from(["task", "x"]),
        },
    )


def status_updates():
    return obj(
        {"taskId": ids},
        {"contextId": ids, "status": statuses(), "final": any_json, "kind": st.just("status-update"), "id": ids},
    )


def artifact_updates():
    return obj(
        {"taskId": ids, "artifact": hostile(artifacts())},
        {
            "contextId": ids,
            "append": any_json,
            "lastChunk": any_json,
            "last_chunk": any_json,
            "kind": st.just("artifact-update"),
        },
    )


def wrapped(inner, names):
    return st.builds(lambda name, value: {name: value}, st.sampled_from(names), inner)


def a2a_objects():
    return st.one_of(
        tasks(),
        messages(),
        status_updates(),
        artifact_updates(),
        wrapped(tasks(), ["task"]),
        wrapped(messages(), ["message", "msg"]),
        wrapped(status_updates(), ["statusUpdate", "status_update"]),
        wrapped(artifact_updates(), ["artifactUpdate", "artifact_update"]),
        st.builds(lambda ts: {"tasks": ts, "nextPageToken": ""}, hostile(st.lists(tasks(), max_size=2))),
        obj(
            {"name": ids},
            {
                "skills": any_json,
                "capabilities": any_json,
                "defaultOutputModes": any_json,
                "supportedInterfaces": any_json,
            },
        ),
        obj({"id": ids, "status": statuses(), "final": st.booleans()}, {"artifacts": any_json}),  # v0.1 status update
        js_objects(),
        store_rows(),
        st.dictionaries(keys, any_json, max_size=9),
    )


def oneof(name, value):
    return {"$case": name, "value": value}


def js_parts():
    return st.one_of(
        st.builds(
            lambda d, m: {"content": oneof("data", d), "mediaType": m, "filename": "", "metadata": None},
            any_json,
            media_types,
        ),
        st.builds(lambda t: {"content": oneof("text", t), "mediaType": "", "filename": ""}, ids),
        st.builds(lambda b, f: {"content": oneof("raw", b), "mediaType": "", "filename": f}, buffers, ids),
        st.builds(lambda u: {"content": oneof("url", u), "mediaType": "", "filename": "f.txt"}, ids),
        st.builds(lambda c: {"content": c}, any_json),
    )


def js_objects():
    js_message = st.builds(
        lambda mid, role, ps, meta: {
            "messageId": mid,
            "role": role,
            "parts": ps,
            "contextId": "",
            "taskId": "",
            "metadata": meta,
            "extensions": [],
        },
        ids,
        st.sampled_from([1, 2, 0, 3]),
        st.lists(js_parts(), max_size=2),
        metadata,
    )
    js_status = st.builds(
        lambda state, ts, m: {"state": state, "timestamp": ts, "message": m},
        st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9, 0]),
        timestamps,
        st.none() | js_message,
    )
    js_artifact = st.builds(
        lambda aid, ps: {
            "artifactId": aid,
            "name": "",
            "description": "",
            "parts": ps,
            "metadata": None,
            "extensions": [],
        },
        ids,
        st.lists(js_parts(), max_size=2),
    )
    js_task = st.builds(
        lambda tid, st_, arts, hist: {
            "id": tid,
            "contextId": "c-1",
            "status": st_,
            "artifacts": arts,
            "history": hist,
            "metadata": None,
        },
        ids,
        js_status,
        st.lists(js_artifact, max_size=2),
        st.lists(js_message, max_size=1),
    )
    js_status_update = st.builds(
        lambda s: {"taskId": "t-1", "contextId": "c-1", "status": s, "metadata": None}, js_status
    )
    js_artifact_update = st.builds(
        lambda a, ap, lc: {"taskId": "t-1", "contextId": "c-1", "artifact": a, "append": ap, "lastChunk": lc},
        js_artifact,
        st.booleans(),
        st.booleans(),
    )
    payloads = st.one_of(
        st.builds(lambda v: {"payload": oneof("task", v)}, js_task),
        st.builds(lambda v: {"payload": oneof("message", v)}, js_message),
        st.builds(lambda v: {"payload": oneof("statusUpdate", v)}, js_status_update),
        st.builds(lambda v: {"payload": oneof("artifactUpdate", v)}, js_artifact_update),
        st.builds(lambda name, v: {"payload": {"$case": name, "value": v}}, any_json, any_json),
        st.builds(
            lambda ts: {"tasks": ts, "nextPageToken": "", "pageSize": 0, "totalSize": len(ts)},
            st.lists(js_task, min_size=1, max_size=2),
        ),
    )
    return st.one_of(js_task, js_message, js_status_update, js_artifact_update, payloads)


def json_text(strategy):
    import json

    return strategy.map(lambda value: json.dumps(value))


def store_rows():
    columns = st.one_of(
        json_text(any_json),
        st.sampled_from(
            ["", "{", "[1,", "nan", '{"a": NaN}', "[1e400]", "[123456789012345678901234]", '"x" y', "null"]
        ),
        any_json,
    )
    return st.builds(
        lambda tid, ctx, status, arts, hist, meta: {
            "id": tid,
            "context_id": ctx,
            "kind": "task",
            "status": status,
            "artifacts": arts,
            "history": hist,
            "metadata": meta,
            "protocol_version": "1.0",
        },
        ids,
        ids,
        st.one_of(json_text(statuses()), st.sampled_from(["", "{", '{"state": "completed"}', "nan"])),
        st.one_of(json_text(st.lists(artifacts(), max_size=2)), columns),
        st.one_of(json_text(st.lists(messages(), max_size=2)), columns),
        st.one_of(json_text(metadata), columns),
    )


def jsonrpc():
    return st.one_of(
        st.builds(
            lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
            ids,
            ids,
            hostile(st.builds(lambda m: {"message": m}, hostile(messages()))),
        ),
        st.builds(
            lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r},
            ids,
            st.one_of(st.none(), a2a_objects(), st.lists(a2a_objects(), max_size=2)),
        ),
        st.builds(
            lambda i, e: {"jsonrpc": "2.0", "id": i, "error": e},
            ids,
            hostile(obj({}, {"code": any_json, "message": ids, "data": any_json})),
        ),
        st.builds(lambda i, r, e: {"id": i, "result": r, "error": e}, ids, any_json, any_json),
        st.builds(lambda e: {"error": e}, hostile(obj({"code": integers, "message": ids}))),
        obj({"id": ids}, {"result": a2a_objects(), "error": any_json, "status": any_json}),
    )


records = st.one_of(a2a_objects(), jsonrpc(), st.lists(st.one_of(a2a_objects(), jsonrpc()), max_size=3), any_json)


def envelopes():
    kinds = st.sampled_from(["exchange", "stream-open", "event", "stream-end", "other", None, 1])
    requests = st.one_of(
        st.builds(
            lambda m: {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": m}},
            hostile(messages()),
        ),
        st.builds(lambda m: {"message": m}, hostile(messages())),
        any_json,
    )
    return obj(
        {"a2a_record": hostile(st.sampled_from([1, 1.0, True, 2, "1"])), "kind": kinds},
        {
            "exchange": ids,
            "time": timestamps,
            "request": requests,
            "response": st.one_of(records, any_json),
            "binding": st.sampled_from(["jsonrpc", "rest", "card", "push-config", "other", ""]),
            "path": st.one_of(ids, st.sampled_from(["/v1/tasks/t-1/pushNotificationConfigs", "/"])),
        },
    )


# --- generated inputs ---------------------------------------------------------------------------------


@SETTINGS
@given(records)
def test_events_of_generated_records(value):
    same(python_events, _core.events_of_value, value)


@SETTINGS
@given(a2a_objects())
def test_events_of_every_dialect(value):
    same(python_events, _core.events_of_value, value)


@SETTINGS
@given(js_objects())
def test_events_of_javascript_client_objects(value):
    same(python_events, _core.events_of_value, value)


@SETTINGS
@given(envelopes(), st.one_of(st.none(), records))
def test_recorded_events_of_generated_envelopes(envelope, event):
    same(python_recorded, lambda e, v: _core.recorded_events_of_value(e, v), envelope, event)


@SETTINGS
@given(store_rows())
def test_task_of_generated_store_rows(row):
    same(python_store_row, _core.task_of_store_row_value, row)


@settings(max_examples=EXAMPLES * 5, deadline=None, suppress_health_check=list(HealthCheck))
@given(timestamps)
def test_timestamp_of_every_form(value):
    same(python_timestamp, _core.timestamp_of_value, value)


# --- explicit edge cases ------------------------------------------------------------------------------

EDGES = [
    {"kind": "task", "id": "t", "status": {"state": "completed", "timestamp": "2024-06-15T10:11:12.1234567Z"}},
    {"kind": "task", "id": {"a": 1, "b": "it's", "c": [None, True, 1.5]}, "status": None},
    {"kind": "message", "messageId": 1e16, "role": True, "parts": [{"kind": "text", "text": 1.5}]},
    {"id": "t", "status": ""},
    {"id": "t", "status": {"state": 3.0}},
    {"statusUpdate": "x"},
    {"task": {"id": "t"}, "id": 1},
    {"tasks": [{"id": "t"}, 1]},
    {"tasks": []},
    {"error": {"code": -32000, "message": "boom"}},
    {"error": None},
    {"jsonrpc": "2.0", "id": 1, "result": {"kind": "task", "id": "t"}, "error": {"code": 1}},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "result": None},
    {"jsonrpc": "2.0", "id": 1, "error": "bad"},
    {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"message": None}},
    [1, "x", None],
    [],
    {"b": 1, "a": 2, "é": 3, "Z": 4, "c": 5, "d": 6, "e": 7, "f": 8, "g": 9},
    {"status": {"state": 1}, "id": "t", "artifacts": [{"parts": [{"content": {"$case": "raw", "value": {"²": 1}}}]}]},
    {
        "payload": {
            "$case": "task",
            "value": {
                "id": "t",
                "status": {"state": 3, "timestamp": "1718000000000"},
                "artifacts": [
                    {"parts": [{"content": {"$case": "raw", "value": {"type": "Buffer", "data": [104, 105]}}}]}
                ],
            },
        }
    },
    {"role": 2, "parts": [{"content": {"$case": "data", "value": {"$case": "kept", "value": 1}}}], "messageId": "m"},
    {"id": "t", "status": {"state": "working", "timestamp": "0001-01-01T00:00:00+01:00"}},
    {"id": "t", "status": {"state": "working", "timestamp": {"seconds": 10**400}}},
    {"id": "t", "status": {"state": "working", "timestamp": "¹718000000"}},
    {
        "kind": "artifact-update",
        "taskId": "t",
        "artifact": {"index": 0, "parts": [{"data": {"data": [1]}}], "lastChunk": 1},
        "append": 0,
    },
    {"kind": "artifact-update", "taskId": "t", "artifact": None},
    {
        "data": {"value": [1, 2]},
        "role": "agent",
        "parts": [{"data": {"data": {"value": [1]}}}, {"data": {"value": 1}, "metadata": {"data_part_compat": True}}],
    },
]


@pytest.mark.parametrize("value", EDGES, ids=range(len(EDGES)))
def test_events_of_edge_cases(value):
    same(python_events, _core.events_of_value, value)


ENVELOPE_EDGES = [
    ({"a2a_record": 1, "kind": "event", "exchange": "e"}, None),
    ({"a2a_record": True, "kind": "event", "exchange": "e"}, {"kind": "status-update", "taskId": "t", "status": {}}),
    ({"a2a_record": 1.0, "kind": "stream-end"}, None),
    ({"a2a_record": "1", "kind": "exchange"}, None),
    ({"a2a_record": None}, None),
    ([1], None),
    ({"a2a_record": 1, "kind": ["x"], "exchange": "e"}, None),
    ({"a2a_record": 1, "kind": "exchange", "exchange": 1}, None),
    ({"a2a_record": 1, "kind": "exchange", "exchange": "", "binding": "card", "response": {"nothing": 1}}, None),
    (
        {
            "a2a_record": 1,
            "kind": "exchange",
            "exchange": "e",
            "path": "/v1/tasks/t/pushNotificationConfigs",
            "response": 5,
        },
        None,
    ),
    (
        {
            "a2a_record": 1,
            "kind": "exchange",
            "exchange": "e",
            "binding": "card",
            "response": {"id": "t", "status": {"timestamp": "¹718000000"}},
        },
        None,
    ),
    (
        {
            "a2a_record": 1,
            "kind": "exchange",
            "exchange": "e",
            "time": "2024-06-15T10:11:12Z",
            "request": {"message": {"role": "user", "parts": []}},
            "path": "/v1/message:send",
            "response": {"task": {"id": "t", "status": {"state": "working"}}},
        },
        None,
    ),
    ({"a2a_record": 1, "kind": "stream-open", "exchange": "e", "time": "0001-01-01T00:00:00+01:00"}, None),
]


@pytest.mark.parametrize(("envelope", "event"), ENVELOPE_EDGES, ids=range(len(ENVELOPE_EDGES)))
def test_recorded_events_edge_cases(envelope, event):
    same(python_recorded, lambda e, v: _core.recorded_events_of_value(e, v), envelope, event)


# --- real samples -------------------------------------------------------------------------------------


def sample_files() -> list[Path]:
    return [
        path
        for top in ("sample_transcripts", "tests")
        for path in sorted((ROOT / top).rglob("*"))
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]


def sample_records():
    for path in sample_files():
        try:
            _container, _compression, records = read_records(SourceFile.on_disk(str(path)))
            for record in records:
                if record.kind in ("json", "row"):
                    yield path, record
        except Exception:
            continue


def test_every_sample_record():
    compared = 0
    for _path, record in sample_records():
        try:
            if record.envelope is not None:
                envelope = decode(record.envelope)
                event = decode(record.payload) if record.payload is not None else None
                same(python_recorded, lambda e, v: _core.recorded_events_of_value(e, v), envelope, event)
            elif record.kind == "row":
                same(python_store_row, _core.task_of_store_row_value, record.value)
            else:
                value = decode(record.payload if record.payload is not None else record.raw)
                if is_envelope(value):
                    same(python_recorded, lambda e, v: _core.recorded_events_of_value(e, v), value, None)
                else:
                    same(python_events, _core.events_of_value, value)
        except ValueError:  # not JSON: the decoder's stage
            continue
        compared += 1
    assert compared > 100, compared


RPC_LOGS = [
    "versant-insights/rpc-v1.jsonl",
    "legacy-funnel/rpc-v03.jsonl",
    "versant-insights/compat-v03-rpc.jsonl",
    "kestrel-mobility/rpc-v1.jsonl",
    "kestrel-mobility/v03-rpc.jsonl",
    "verify-demo/rpc-v1.jsonl",
]
SEGMENT = "rec-20261130T174000000000-0a1b2c3d-{:06d}.{}"


def spool_segments(spool: Path) -> list[Path]:
    """Spool segments of every sample JSON-RPC log and stream, as `archiver record` writes them."""
    from tests.spool_segments import Stream, rpc_exchanges, sample_events, stream_request, stream_segment, unary_segment

    spool.mkdir()
    paths = [
        unary_segment(spool / SEGMENT.format(n, "jsonl"), rpc_exchanges(name, f"u{n}"))
        for n, name in enumerate(RPC_LOGS)
    ]
    for n, path in enumerate(sorted((ROOT / "sample_transcripts").rglob("*.sse")), start=len(paths)):
        events = sample_events(str(path.relative_to(ROOT / "sample_transcripts")))
        try:
            request = stream_request(events, "message/stream" if "v03" in path.name else "SendStreamingMessage")
        except (KeyError, IndexError, TypeError, ValueError):
            request = None
        binding = "rest" if "rest" in path.name else "jsonrpc"
        paths.append(
            stream_segment(spool / SEGMENT.format(n, "sse"), [Stream(f"s{n}", request, events, binding=binding)])
        )
    return paths


def test_every_spool_segment_record_of_the_samples(tmp_path):
    compared = 0
    for path in spool_segments(tmp_path / "spool"):
        _container, _compression, records = read_records(SourceFile.on_disk(str(path)))
        for record in records:
            if record.kind != "json":
                continue
            if record.envelope is not None:
                event = decode(record.payload) if record.payload is not None else None
                same(python_recorded, lambda e, v: _core.recorded_events_of_value(e, v), decode(record.envelope), event)
            else:
                same(
                    python_recorded,
                    lambda e, v: _core.recorded_events_of_value(e, v),
                    decode(record.payload or record.raw),
                    None,
                )
            compared += 1
    assert compared > 50, compared
