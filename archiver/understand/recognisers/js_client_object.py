"""Objects as the JavaScript SDK's client returns them (`@a2a-js/sdk` 1.x), written with JSON.stringify.

They are the SDK's in-memory protobuf model (ts-proto), not ProtoJSON: a oneof is
`{"$case": "<field>", "value": ...}` (a stream event `{"payload": {"$case": "statusUpdate", "value": {...}}}`,
a Part `{"content": {"$case": "data", "value": {...}}, "mediaType": "...", "filename": ""}`), enums are
integers, unset strings are "", and bytes are a Node Buffer (`{"type": "Buffer", "data": [...]}`).
`proto_json_of` rewrites such an object into the ProtoJSON shape the v1.0 readers already take; the
integer enums and "" defaults are left as they are, since those readers accept them.
"""

from __future__ import annotations

import base64
from typing import Any

from ..model import Event

_USER_JSON = frozenset({"data", "metadata", "params", "header"})
"""Fields whose values are the sender's own JSON (a data Part, metadata, extension params, a
signature header): their keys, "$case" included, are kept as they are."""


def js_client_object(obj: dict) -> list[Event] | None:
    """The events of a JavaScript client object, read as the ProtoJSON it stands for by the other
    recognisers (its integer enums stay, so it would still look like a client object to this one);
    None when `obj` is not one."""
    converted = proto_json_of(obj)
    if converted is None:
        return None
    from ..events import payload_events  # the registry this recogniser belongs to
    from . import RECOGNISERS

    return payload_events(converted, tuple(r for r in RECOGNISERS if r is not js_client_object))


def proto_json_of(obj: dict) -> dict | None:
    """The ProtoJSON form of a JavaScript client object; None when `obj` is not one."""
    return _proto_json(obj) if _is_client_object(obj) else None


def _is_client_object(obj: dict) -> bool:
    """Whether `obj` has a mark only the in-memory model leaves: a `$case` oneof at the top, an integer
    role or task state (ts-proto keeps enums as numbers and always sets them), or Parts held as oneofs."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        return "$case" in payload
    status = obj.get("status")
    if isinstance(status, dict) and _is_number(status.get("state")):
        return True
    if _is_number(obj.get("role")):
        return True
    artifact = obj.get("artifact")
    if isinstance(artifact, dict):
        parts = artifact.get("parts")
        return isinstance(parts, list) and any(
            _is_oneof(part.get("content")) for part in parts if isinstance(part, dict)
        )
    tasks = obj.get("tasks")
    return isinstance(tasks, list) and bool(tasks) and isinstance(tasks[0], dict) and _is_client_object(tasks[0])


def _is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_oneof(value: Any) -> bool:
    return isinstance(value, dict) and "$case" in value and value.keys() <= {"$case", "value"}


def _proto_json(value: Any) -> Any:
    """Each `{"$case": name, "value": v}` held in a field becomes the member `name: v` of its parent."""
    if isinstance(value, list):
        return [_proto_json(item) for item in value]
    if not isinstance(value, dict):
        return value
    found = {}
    for key, item in value.items():
        if key in _USER_JSON:
            found[key] = item
        elif isinstance(item, dict) and "$case" in item and _is_oneof(item):  # a call per field costs: asked first
            name, inner = str(item["$case"]), item.get("value")
            found[name] = inner if name in _USER_JSON else _bytes(inner) if name == "raw" else _proto_json(inner)
        else:
            found[key] = _proto_json(item)
    return found


def _bytes(value: Any) -> Any:
    """Base64 text, as ProtoJSON gives bytes, of a Node Buffer (`{"type": "Buffer", "data": [...]}`) or a
    Uint8Array (`{"0": 109, "1": 111, ...}`) as JSON.stringify writes them."""
    if isinstance(value, dict) and value.get("type") == "Buffer" and isinstance(value.get("data"), list):
        octets = value["data"]
    elif isinstance(value, dict) and value and all(key.isdigit() for key in value):
        octets = [value[key] for key in sorted(value, key=int)]
    elif isinstance(value, list):
        octets = value
    else:
        return value
    try:
        return base64.b64encode(bytes(octets)).decode("ascii")
    except (TypeError, ValueError):
        return value
