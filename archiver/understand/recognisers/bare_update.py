"""Stream events with no tag, told by their fields: v1.0 and v0.3 REST events as a stream carries them
bare, and v0.1's `TaskStatusUpdateEvent`."""

from __future__ import annotations

from ..dialects import artifact_update_of, field, status_update_of
from ..model import Event


def bare_update(obj: dict) -> list[Event] | None:
    """An `artifact` with a task id; a `status` with a `taskId` (no `id`); or v0.1's `{"id", "status", "final"}`."""
    if obj.get("artifact") is not None and field(obj, "taskId", "task_id", "id") is not None:
        return [artifact_update_of(obj)]
    if "status" not in obj:
        return None
    if field(obj, "taskId", "task_id") is not None and "id" not in obj:
        return [status_update_of(obj)]
    if "final" in obj and not ({"artifacts", "history"} & obj.keys()):
        return [status_update_of(obj)]
    return None
