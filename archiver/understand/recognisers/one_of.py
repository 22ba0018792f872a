"""Objects that hold exactly one A2A object under a member named for its type: v1.0 `StreamResponse` and
`SendMessageResponse` (`{"task"}`, `{"message"}`, `{"statusUpdate"}`, `{"artifactUpdate"}`) and the
v0.3 REST bodies and stream events (`{"msg"}`, snake_case members too)."""

from __future__ import annotations

from ..dialects import NotUnderstoodError, artifact_update_of, message_of, status_update_of, task_of
from ..model import Event

_READERS = {
    "task": task_of,
    "message": message_of,
    "msg": message_of,
    "statusUpdate": status_update_of,
    "status_update": status_update_of,
    "artifactUpdate": artifact_update_of,
    "artifact_update": artifact_update_of,
}


def one_of(obj: dict) -> list[Event] | None:
    """One member of `_READERS` set, and none of a bare Task's or Message's own fields beside it."""
    members = [key for key in _READERS if obj.get(key) is not None]
    if len(members) != 1 or {"id", "messageId", "status"} & obj.keys():
        return None
    inner = obj[members[0]]
    if not isinstance(inner, dict):
        raise NotUnderstoodError(f"{members[0]} is not an object")
    return [_READERS[members[0]](inner)]
