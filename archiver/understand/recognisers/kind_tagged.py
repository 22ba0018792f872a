"""v0.2/v0.3 JSON-RPC objects, which name their own type in `kind`."""

from __future__ import annotations

from ..dialects import artifact_update_of, message_of, status_update_of, task_of
from ..model import Event

_READERS = {
    "task": task_of,
    "message": message_of,
    "status-update": status_update_of,
    "artifact-update": artifact_update_of,
}


def kind_tagged(obj: dict) -> list[Event] | None:
    """`{"kind": "task" | "message" | "status-update" | "artifact-update", ...}`."""
    kind = obj.get("kind")
    read = _READERS.get(kind) if isinstance(kind, str) else None
    return [read(obj)] if read is not None else None
