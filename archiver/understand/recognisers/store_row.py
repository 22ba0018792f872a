"""A row of an A2A SDK's task store (`DatabaseTaskStore`), exported as JSON: its JSON columns held as text."""

from __future__ import annotations

from ..dialects import is_store_row, task_of_store_row
from ..model import Event


def store_row(obj: dict) -> list[Event] | None:
    """`{"id", "context_id", "status": "<JSON text>", "artifacts", "history", "metadata", ...}`: one Task."""
    return [task_of_store_row(obj)] if is_store_row(obj) else None
