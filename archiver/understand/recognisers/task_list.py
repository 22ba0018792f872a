"""A list of tasks: v1.0 `ListTasksResponse` (`{"tasks", "nextPageToken", ...}`) and REST list bodies."""

from __future__ import annotations

from ..dialects import task_of
from ..model import Event


def task_list(obj: dict) -> list[Event] | None:
    """`{"tasks": [Task, ...]}`: each Task; none when an item is not an object."""
    tasks = obj.get("tasks")
    if not isinstance(tasks, list):
        return None
    return [task_of(task) for task in tasks] if all(isinstance(task, dict) for task in tasks) else []
