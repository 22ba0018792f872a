"""Readers of A2A objects (v0.1, v0.3 JSON-RPC, v0.3 REST, v1.0 ProtoJSON) into the canonical model.

Each reader takes one piece (a Part, a Message, a Task, a stream event) in any dialect. Which reader a
whole object goes to is decided per object, never per file, by the recognisers
(`archiver.understand.recognisers`, tried in order by `archiver.understand.events`); see
docs/recognisers.md. Tolerance rules of `shared/spec/a2a-dialects.md`: "" and null mean absent,
camelCase and snake_case both accepted, integer enums accepted, timestamps in every form.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

from ..errors import RecordError
from .model import Artifact, ArtifactUpdate, Message, Part, Status, StatusUpdate, Task


class NotUnderstoodError(RecordError):
    """The value is JSON but no A2A object could be read from it."""


_ROLES = {"user": "user", "role_user": "user", "1": "user", "agent": "agent", "role_agent": "agent", "2": "agent"}
_STATES_BY_NUMBER = {
    1: "submitted",
    2: "working",
    3: "completed",
    4: "failed",
    5: "canceled",
    6: "input-required",
    7: "rejected",
    8: "auth-required",
}
_PART_KINDS = ("text", "data", "file", "url", "raw")


def field(obj: dict, *names: str) -> Any:
    """The first present, non-empty value among `names` ("" and null mean absent)."""
    for name in names:
        value = obj.get(name)
        if value is not None and value != "":
            return value
    return None


def text_of(value: Any) -> str | None:
    """A string field's value as text; None for "" and null."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def role_of(value: Any) -> str:
    return _ROLES.get(str(value).lower(), "unknown") if value is not None else "unknown"


def state_of(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return _STATES_BY_NUMBER.get(value, "unknown")
    name = str(value).lower().removeprefix("task_state_").replace("_", "-")
    return {"cancelled": "canceled", "unspecified": None}.get(name, name)


def timestamp_of(value: Any) -> datetime | None:
    """Parse a timestamp given with Z, an offset or no zone, any sub-second precision, or epoch (seconds or
    milliseconds, as a number or digits; or a protobuf Timestamp object, `{"seconds", "nanos"}`)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, dict):
        seconds = _number(value.get("seconds"))
        if seconds is None:
            return None
        value = seconds + (_number(value.get("nanos")) or 0) / 1e9
    elif isinstance(value, str) and value.strip().isdigit() and len(value.strip()) >= 10:
        value = int(value)  # epoch digits; fewer than ten are a compact ISO date (20260615)
    try:
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, tz=UTC)
        text = str(value).strip().replace(" ", "T", 1)
        if text.endswith(("z", "Z")):
            text = text[:-1] + "+00:00"
        head, dot, rest = text.partition(".")
        if dot:
            digits = len(rest) - len(rest.lstrip("0123456789"))
            text = head + "." + rest[: min(digits, 6)].ljust(6, "0") + rest[digits:]
        parsed = datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _number(value: Any) -> float | None:
    """A protobuf int64 as JSON gives it (a number, or digits in a string); None for anything else."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _metadata(obj: dict) -> dict | None:
    value = obj.get("metadata")
    return value if isinstance(value, dict) and value else None


def media_type_of(obj: dict, metadata: dict | None) -> str | None:
    """v1 `mediaType` first, then metadata.mediaType, metadata.mimeType, metadata.media_type."""
    found = field(obj, "mediaType", "media_type")
    if found is None and metadata:
        found = field(metadata, "mediaType", "mimeType", "media_type")
    return text_of(found)


def part_of(obj: Any) -> Part:
    if not isinstance(obj, dict):
        raise NotUnderstoodError(f"a Part is not an object: {type(obj).__name__}")
    metadata = _metadata(obj)
    tag = obj.get("kind") or obj.get("type")
    if tag in ("text", "data", "file"):
        kind = tag
    else:
        present = [name for name in _PART_KINDS if obj.get(name) is not None]
        if len(present) > 1:
            raise NotUnderstoodError(f"a Part has more than one content field: {', '.join(present)}")
        kind = present[0] if present else "unknown"
    part = Part(kind=kind, metadata=metadata, media_type=media_type_of(obj, metadata))
    if kind == "unknown":
        part.raw = obj
    elif kind == "text":
        part.text = text_of(obj.get("text")) or ""
    elif kind == "data":
        part.data = _unwrap_data(obj.get("data"), metadata, obj)
    elif kind in ("file", "url", "raw"):
        part.kind, part.file = "file", file_of(obj, kind)
        if part.media_type is None and isinstance(obj.get("file"), dict):
            part.media_type = text_of(field(obj["file"], "mimeType", "mime_type", "mediaType", "media_type"))
    return part


def file_of(obj: dict, kind: str) -> dict:
    """One shape for a file however it travels: {"uri"} or {"bytes"}, with its "name" when given.

    v1.0 `url`/`raw` with `filename`; v0.3 `file: {uri|bytes, name, mimeType}`; v0.3 REST
    `file: {fileWithUri|fileWithBytes, mimeType}`.
    """
    if kind == "url":
        found = {"uri": obj.get("url")}
    elif kind == "raw":
        found = {"bytes": obj.get("raw")}
    else:
        inner = obj.get("file")
        if not isinstance(inner, dict):
            return {"uri": inner} if isinstance(inner, str) else {"value": inner}
        found = {
            "uri": field(inner, "uri", "fileWithUri", "file_with_uri"),
            "bytes": field(inner, "bytes", "fileWithBytes", "file_with_bytes"),
        }
        obj = {**inner, **obj}
    name = field(obj, "filename", "name")
    if name is not None:
        found["name"] = name
    return {key: value for key, value in found.items() if value is not None}


def _unwrap_data(data: Any, metadata: dict | None, part: dict) -> Any:
    # v0.3 REST nests the DataPart message: {"data": {"data": {...}}}.
    rest_v03 = (
        isinstance(data, dict)
        and len(data) == 1
        and isinstance(data.get("data"), dict)
        and "mediaType" not in part
        and "kind" not in part
        and "type" not in part
    )
    if rest_v03:
        data = data["data"]
    # A 1.x SDK answering a 0.3 client wraps non-object data as {"value": ...} and says so in
    # metadata.data_part_compat; the JavaScript SDK's v0.3 REST layer drops Part metadata, flag and all.
    # v0.3 data is always an object, so in a v0.3 REST data Part a lone "value" holding an array or a
    # scalar is that wrapping: the data (and every claim's pointer) is what it wraps, as in a v1.0 copy.
    if isinstance(data, dict) and len(data) == 1 and "value" in data:
        flagged = metadata and metadata.get("data_part_compat")
        if flagged or (rest_v03 and not isinstance(data["value"], dict)):
            data = data["value"]
    return data


def _parts(obj: dict, *names: str) -> list[Part]:
    raw = field(obj, *names)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise NotUnderstoodError("parts is not an array")
    return [part_of(item) for item in raw]


def message_of(obj: Any) -> Message:
    if not isinstance(obj, dict):
        raise NotUnderstoodError("a Message is not an object")
    return Message(
        message_id=text_of(field(obj, "messageId", "message_id")),
        role=role_of(obj.get("role")),
        parts=_parts(obj, "parts", "content"),
        context_id=text_of(field(obj, "contextId", "context_id")),
        task_id=text_of(field(obj, "taskId", "task_id")),
        metadata=_metadata(obj),
    )


def artifact_of(obj: Any) -> Artifact:
    if not isinstance(obj, dict):
        raise NotUnderstoodError("an Artifact is not an object")
    artifact_id = field(obj, "artifactId", "artifact_id")
    if artifact_id is None and obj.get("index") is not None:  # v0.1 addressed artifacts by index
        artifact_id = f"index:{obj['index']}"
    return Artifact(
        artifact_id=text_of(artifact_id),
        name=text_of(obj.get("name")),
        parts=_parts(obj, "parts"),
        metadata=_metadata(obj),
    )


def status_of(obj: Any) -> Status:
    if obj is None:
        return Status()
    if not isinstance(obj, dict):
        raise NotUnderstoodError("a task status is not an object")
    message = field(obj, "message", "update")
    return Status(
        state=state_of(obj.get("state")),
        timestamp=timestamp_of(obj.get("timestamp")),
        message=message_of(message) if message is not None else None,
    )


def _list(obj: dict, *names: str) -> list:
    value = field(obj, *names)
    if value is None:
        return []
    if not isinstance(value, list):
        raise NotUnderstoodError(f"{names[0]} is not an array")
    return value


def task_of(obj: dict) -> Task:
    task_id = text_of(field(obj, "id", "taskId", "task_id"))
    if task_id is None:
        raise NotUnderstoodError("a Task without an id")
    return Task(
        task_id=task_id,
        context_id=text_of(field(obj, "contextId", "context_id", "sessionId", "session_id")),
        status=status_of(obj.get("status")),
        artifacts=[artifact_of(a) for a in _list(obj, "artifacts")],
        history=[message_of(m) for m in _list(obj, "history")],
        metadata=_metadata(obj),
    )


STORE_ROW_COLUMNS = frozenset({"id", "context_id", "status"})


def is_store_row(obj: dict) -> bool:
    """A row of the A2A SDK's task store: JSON columns held as text."""
    return obj.keys() >= STORE_ROW_COLUMNS and isinstance(obj.get("status"), str)


def task_of_store_row(row: dict) -> Task:
    """Rebuild a Task from a task-store row (protocol_version NULL/'0.3' or '1.0')."""

    def column(name: str) -> Any:
        value = row.get(name)
        if isinstance(value, (str, bytes)) and value:
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError as exc:
                raise NotUnderstoodError(f"task-store column {name} is not JSON: {exc}") from None
        return value

    return task_of(
        {
            "id": row.get("id"),
            "contextId": row.get("context_id"),
            "status": column("status"),
            "artifacts": column("artifacts"),
            "history": column("history"),
            "metadata": column("metadata"),
        }
    )


def status_update_of(obj: dict) -> StatusUpdate:
    task_id = text_of(field(obj, "taskId", "task_id", "id"))
    if task_id is None:
        raise NotUnderstoodError("a status update without a task id")
    return StatusUpdate(task_id, text_of(field(obj, "contextId", "context_id")), status_of(obj.get("status")))


def artifact_update_of(obj: dict) -> ArtifactUpdate:
    task_id = text_of(field(obj, "taskId", "task_id", "id"))
    if task_id is None:
        raise NotUnderstoodError("an artifact update without a task id")
    artifact = obj.get("artifact")
    return ArtifactUpdate(
        task_id=task_id,
        context_id=text_of(field(obj, "contextId", "context_id")),
        artifact=artifact_of(artifact),
        append=bool(obj.get("append") or (isinstance(artifact, dict) and artifact.get("append"))),
        last_chunk=bool(
            field(obj, "lastChunk", "last_chunk") or (isinstance(artifact, dict) and artifact.get("lastChunk"))
        ),
    )
