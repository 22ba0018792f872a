"""The canonical model as the tests spell it, read from the compiled core's test surfaces.

The core hands each event over as a dict (`dataclasses.asdict` of the model the Python readers had,
plus `"event"`, its class name; timestamps as microseconds since the epoch). These dataclasses are that
model again, so that a test states an expected event as `Task(...)`, and the readers below give the
core's answer in them: `events_of`, `payload_events`, `recognise` (one recogniser alone), `part_of`,
`state_of`, `timestamp_of`, `proto_json_of`. A record the core does not understand raises
`NotUnderstoodError` with the core's reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from archiver import _core

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class NotUnderstoodError(ValueError):
    """The core did not understand a value: its message is the quarantine reason."""


@dataclass
class Part:
    kind: str  # text | data | file | url | raw | unknown
    text: str | None = None
    data: Any = None
    file: Any = None
    media_type: str | None = None
    metadata: dict | None = None
    raw: dict | None = None


@dataclass
class Message:
    message_id: str | None
    role: str  # user | agent | unknown
    parts: list[Part]
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict | None = None


@dataclass
class Artifact:
    artifact_id: str | None
    name: str | None
    parts: list[Part]
    metadata: dict | None = None


@dataclass
class Status:
    state: str | None = None
    timestamp: datetime | None = None
    message: Message | None = None


@dataclass
class Task:
    task_id: str
    context_id: str | None
    status: Status
    artifacts: list[Artifact] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    metadata: dict | None = None


@dataclass
class StatusUpdate:
    task_id: str
    context_id: str | None
    status: Status


@dataclass
class ArtifactUpdate:
    task_id: str
    context_id: str | None
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False


@dataclass
class AgentCard:
    card: dict


@dataclass
class ErrorResponse:
    rpc_id: Any
    code: Any
    message: str | None


@dataclass
class Request:
    rpc_id: Any
    method: str | None
    message: Message | None


# --- the core's dicts as the model ---------------------------------------------------------------------


def moment(micros: int | None) -> datetime | None:
    return None if micros is None else EPOCH + timedelta(microseconds=micros)


def part(d: dict) -> Part:
    return Part(**d)


def message(d: dict | None) -> Message | None:
    if d is None:
        return None
    return Message(**{**d, "parts": [part(p) for p in d["parts"]]})


def artifact(d: dict) -> Artifact:
    return Artifact(**{**d, "parts": [part(p) for p in d["parts"]]})


def status(d: dict) -> Status:
    return Status(d["state"], moment(d["timestamp"]), message(d["message"]))


def event(d: dict) -> Any:
    d = dict(d)
    name = d.pop("event")
    if name == "Task":
        return Task(
            d["task_id"],
            d["context_id"],
            status(d["status"]),
            [artifact(a) for a in d["artifacts"]],
            [message(m) for m in d["history"]],
            d["metadata"],
        )
    if name == "Message":
        return message(d)
    if name == "StatusUpdate":
        return StatusUpdate(d["task_id"], d["context_id"], status(d["status"]))
    if name == "ArtifactUpdate":
        return ArtifactUpdate(d["task_id"], d["context_id"], artifact(d["artifact"]), d["append"], d["last_chunk"])
    if name == "AgentCard":
        return AgentCard(d["card"])
    if name == "ErrorResponse":
        return ErrorResponse(d["rpc_id"], d["code"], d["message"])
    if name == "Request":
        return Request(d["rpc_id"], d["method"], message(d["message"]))
    raise AssertionError(f"the core named an event {name!r}")


def _understood(call, *args):
    try:
        return call(*args)
    except ValueError as exc:
        raise NotUnderstoodError(str(exc)) from None


# --- the core's readers -----------------------------------------------------------------------------------


def events_of(value: Any) -> list:
    """All events of one decoded record, its JSON-RPC envelope unwrapped."""
    return [event(d) for d in _understood(_core.events_of_value, value)]


def payload_events(value: Any) -> list:
    """The events of the first recogniser, in the registry's order, that knows the object."""
    return [event(d) for d in _understood(_core.payload_events_of_value, value)]


def recognise(name: str, obj: dict) -> list | None:
    """The recogniser `name` alone: None when it passes the object by."""
    events = _understood(_core.recognise_value, name, obj)
    return None if events is None else [event(d) for d in events]


def part_of(obj: Any) -> Part:
    return part(_understood(_core.part_of_value, obj))


def state_of(value: Any) -> str | None:
    return _core.state_of_value(value)


def timestamp_of(value: Any) -> datetime | None:
    return moment(_understood(_core.timestamp_of_value, value))


def proto_json_of(obj: dict) -> dict | None:
    return _understood(_core.proto_json_of_value, obj)
