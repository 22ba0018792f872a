"""A Task or a Message with no tag, told by its fields: v1.0 ProtoJSON, v0.3 REST, v0.1, and stored objects."""

from __future__ import annotations

from ..dialects import field, message_of, task_of
from ..model import Event


def bare_object(obj: dict) -> list[Event] | None:
    """A Task: a `status` and an `id`. A Message: a `messageId`, or a `role` with `parts` or `content`."""
    if "status" in obj and field(obj, "id") is not None:
        return [task_of(obj)]
    if field(obj, "messageId", "message_id") is not None or ("role" in obj and ("parts" in obj or "content" in obj)):
        return [message_of(obj)]
    return None
