"""The ids the scripted agents of the recording proxy's tests give, the same whichever SDK (and version) runs
them, so that two fresh servers answer alike. Plain classes: the SDKs only call `generate`. Imported by
tests/record_support.py and, in its own venv, by tests/sdk03_peer.py."""

from __future__ import annotations


class TaskIds:
    """A new task's id, from its context's: `task-<context id>`."""

    def generate(self, context) -> str:
        return f"task-{context.context_id}"


class Counted:
    """Message ids `<prefix>-msg-1`, `-2`, ..."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.n = prefix, 0

    def generate(self, context) -> str:
        self.n += 1
        return f"{self.prefix}-msg-{self.n}"
