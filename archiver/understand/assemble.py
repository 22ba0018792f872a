"""Reassemble the stored copies of results found in one source file.

A result is one Task (its artifacts plus the parts of agent messages in its
status and history) or one standalone agent Message. Stream events and later
snapshots of the same task in the same file merge into one copy; the same
task in another file is another copy.
"""

from __future__ import annotations

import pickle
import sqlite3
from collections import OrderedDict, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Any

from ..canonical import content_hash
from .dialects import NotUnderstoodError
from .model import (
    TERMINAL_STATES,
    AgentCard,
    Artifact,
    ArtifactUpdate,
    ErrorResponse,
    Event,
    Message,
    Part,
    Request,
    StatusUpdate,
    Task,
)


@dataclass
class LocatedPart:
    location: str  # artifact | message
    part_index: int
    part: Part
    role: str
    artifact: Artifact | None = None
    message: Message | None = None


@dataclass
class StoredCopy:
    key: str
    kind: str  # task | message
    task_id: str | None
    context_id: str | None
    message_id: str | None = None
    state: str | None = None
    timestamp: datetime | None = None
    metadata: dict | None = None
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    record_ids: list[str] = field(default_factory=list)
    locator: str | None = None
    """Where the first of `record_ids` stands in the file."""

    @property
    def terminal(self) -> bool:
        return self.kind == "message" or self.state in TERMINAL_STATES

    def touch(self, record_id: str, locator: str | None = None) -> None:
        if not self.record_ids:
            self.locator = locator
        if not self.record_ids or self.record_ids[-1] != record_id:
            self.record_ids.append(record_id)

    def add_message(self, message: Message) -> None:
        key = message.message_id or "content:" + content_hash([_part_content(p) for p in message.parts])
        self.messages.setdefault(key, message)

    def apply_task(self, task: Task) -> None:
        self.context_id = task.context_id or self.context_id
        self.metadata = task.metadata or self.metadata
        self._apply_status(task.status)
        for index, artifact in enumerate(task.artifacts):
            self.artifacts[artifact.artifact_id or f"position:{index}"] = artifact
        for message in task.history:
            self.add_message(message)
        if task.status.message is not None:
            self.add_message(task.status.message)

    def apply_status(self, update: StatusUpdate) -> None:
        self.context_id = update.context_id or self.context_id
        self._apply_status(update.status)
        if update.status.message is not None:
            self.add_message(update.status.message)

    def _apply_status(self, status) -> None:
        if status.state is not None:
            self.state = status.state
        if status.timestamp is not None:
            self.timestamp = status.timestamp

    def apply_artifact(self, update: ArtifactUpdate) -> None:
        self.context_id = update.context_id or self.context_id
        artifact = update.artifact
        key = artifact.artifact_id or f"position:{len(self.artifacts)}"
        known = self.artifacts.get(key)
        if update.append and known is not None:
            self.artifacts[key] = Artifact(
                known.artifact_id,
                known.name or artifact.name,
                known.parts + artifact.parts,
                known.metadata or artifact.metadata,
            )
        else:
            self.artifacts[key] = artifact

    def located_parts(self) -> Iterator[LocatedPart]:
        for artifact in self.artifacts.values():
            for index, part in enumerate(artifact.parts):
                yield LocatedPart("artifact", index, part, "agent", artifact=artifact)
        for message in self.messages.values():
            for index, part in enumerate(message.parts):
                yield LocatedPart("message", index, part, message.role, message=message)


def _part_content(part: Part) -> Any:
    return [part.kind, part.text, part.data if part.raw is None else part.raw, part.file]


HELD_BYTES = 4 * 2**20
"""Record bytes whose tasks an assembly keeps in memory (their objects take about ten times as much);
past it, the tasks touched least recently are put aside on disk until a later record touches them
again or the file ends. Bounds the memory of one file's assembly whatever its size, and
changes nothing in what it assembles."""

KEPT_BYTES = 16 * 2**20
"""A task touched by this many bytes of records is never put aside: pickling it would copy it twice."""

LOOSE_BATCH = 1024
"""Loose messages kept in memory before they join the others on disk."""


class _Aside:
    """Stored copies and loose messages put aside, pickled, in a private temporary SQLite database
    (it finds one task among millions with no index in memory); each is read back once."""

    def __init__(self) -> None:
        self.db: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        if self.db is None:
            self.db = sqlite3.connect("")  # on disk, private, deleted when closed
            self.db.executescript("""
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
                CREATE TABLE tasks (task_id TEXT PRIMARY KEY, context_id TEXT, copy BLOB);
                CREATE TABLE loose (messages BLOB);
            """)
        return self.db

    def put(self, copy: StoredCopy) -> None:
        self._open().execute(
            "INSERT INTO tasks VALUES (?, ?, ?)",
            (copy.task_id, copy.context_id, pickle.dumps(copy, pickle.HIGHEST_PROTOCOL)),
        )

    def take(self, task_id: str) -> StoredCopy | None:
        """The task put aside under `task_id`, no longer aside; None if there is none."""
        if self.db is None:
            return None
        found = self.db.execute("SELECT copy FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        if found is None:
            return None
        self.db.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,))
        return pickle.loads(found[0])

    def context_of(self, task_id: str) -> tuple[bool, str | None]:
        """Whether a task is aside, and its context."""
        if self.db is None:
            return False, None
        found = self.db.execute("SELECT context_id FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        return found is not None, found[0] if found else None

    def put_loose(self, messages: list) -> None:
        self._open().execute("INSERT INTO loose VALUES (?)", (pickle.dumps(messages, pickle.HIGHEST_PROTOCOL),))

    def loose_batches(self) -> Iterator[list]:
        if self.db is not None:
            for (messages,) in self.db.execute("SELECT messages FROM loose ORDER BY rowid"):
                yield pickle.loads(messages)

    def copies(self) -> Iterator[StoredCopy]:
        """Every task still aside, one at a time."""
        if self.db is not None:
            for row in self.db.execute("SELECT copy FROM tasks"):
                copy = pickle.loads(row[0])
                del row  # a huge task's pickle is not kept while its rows are made
                yield copy

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


@dataclass
class FileAssembly:
    """Feeds on the decoded records of one file, in order; yields its stored copies.

    Only the tasks of the last `held_bytes` of records stay in memory; the others wait on disk (a
    later record may still change any task, so none can be finished early)."""

    tasks: dict[str, StoredCopy] = field(default_factory=dict)
    loose: list[tuple[str, Message, str | None]] = field(default_factory=list)
    """The latest loose messages (with the id and locator of the record each came in); the earlier
    ones are put aside."""
    requests: dict[Any, Message] = field(default_factory=dict)
    cards: list[tuple[str, dict]] = field(default_factory=list)
    errors: list[tuple[str, ErrorResponse]] = field(default_factory=list)
    held_bytes: int = field(default_factory=lambda: HELD_BYTES)
    _recent: OrderedDict = field(default_factory=OrderedDict)  # task id: record bytes, least recent first
    _held: int = 0
    _aside: _Aside = field(default_factory=_Aside)

    def add(self, record_id: str, rpc_id: Any, events: list[Event], locator: str | None = None, size: int = 0) -> None:
        """Take one record's events (`size` bytes of it); NotUnderstoodError, before any change, when they
        put a task seen here in another context (a task id is unique to its context: the record is
        quarantined)."""
        self._check_contexts(events)
        if not isinstance(rpc_id, (str, int, float)):  # JSON-RPC ids are strings or numbers
            rpc_id = None
        touched: set[str] = set()
        for event in events:
            if isinstance(event, (Task, StatusUpdate, ArtifactUpdate)):
                copy = self._apply(event, rpc_id)
                copy.touch(record_id, locator)
                touched.add(copy.task_id)
            elif isinstance(event, Message):
                self._answer(record_id, locator, rpc_id, event)
            elif isinstance(event, Request):
                self._request(record_id, locator, event)
            elif isinstance(event, AgentCard):
                self.cards.append((record_id, event.card))
            elif isinstance(event, ErrorResponse):
                self.errors.append((record_id, event))
        self._hold(touched, size)

    def _apply(self, event: Task | StatusUpdate | ArtifactUpdate, rpc_id: Any) -> StoredCopy:
        """The stored copy of the event's task, changed by it."""
        copy = self._task(event.task_id, event.context_id)
        if isinstance(event, Task):
            copy.apply_task(event)
            self._link_request(rpc_id, copy)
        elif isinstance(event, StatusUpdate):
            copy.apply_status(event)
        else:
            copy.apply_artifact(event)
        return copy

    def _answer(self, record_id: str, locator: str | None, rpc_id: Any, message: Message) -> None:
        """A loose message, after the request it answers (which takes its task and context when it had none)."""
        request = self.requests.pop(rpc_id, None) if rpc_id is not None else None
        if request is not None:
            request.task_id = request.task_id or message.task_id
            request.context_id = request.context_id or message.context_id
            self._loose(record_id, locator, request)
        self._loose(record_id, locator, message)

    def _request(self, record_id: str, locator: str | None, request: Request) -> None:
        """A request's message: loose when it names its task, else kept until its answer comes."""
        if request.message is None:
            return
        if request.message.task_id is not None:
            self._loose(record_id, locator, request.message)
        elif isinstance(request.rpc_id, (str, int, float)):
            self.requests[request.rpc_id] = request.message

    def _loose(self, record_id: str, locator: str | None, message: Message) -> None:
        self.loose.append((record_id, message, locator))
        if len(self.loose) >= LOOSE_BATCH:
            self._aside.put_loose(self.loose)
            self.loose = []

    def _hold(self, touched: set[str], size: int) -> None:
        """Count `size` against the tasks just touched; put the least recent aside past `held_bytes`."""
        share = size // max(1, len(touched))
        for task_id in touched:
            self._recent[task_id] = self._recent.pop(task_id, 0) + share
            self._held += share
        while self._held > self.held_bytes and len(self._recent) > 1:
            task_id, held = self._recent.popitem(last=False)
            self._held -= held
            if isinstance(task_id, str) and held < KEPT_BYTES:
                self._aside.put(self.tasks.pop(task_id))

    def _check_contexts(self, events: list[Event]) -> None:
        contexts: dict[str, str | None] = {}  # what this record's earlier events said
        for event in events:
            if not isinstance(event, (Task, StatusUpdate, ArtifactUpdate)) or event.context_id is None:
                continue
            known = contexts[event.task_id] if event.task_id in contexts else self._context_of(event.task_id)
            if known is None:
                contexts[event.task_id] = event.context_id
            elif known != event.context_id:
                raise NotUnderstoodError(
                    f"task {event.task_id} was seen in context {known}; this record puts it in context "
                    f"{event.context_id}"
                )

    def _context_of(self, task_id: str) -> str | None:
        copy = self.tasks.get(task_id)
        if copy is not None:
            return copy.context_id
        return self._aside.context_of(task_id)[1] if isinstance(task_id, str) else None

    def _task(self, task_id: str, context_id: str | None) -> StoredCopy:
        copy = self._known(task_id)
        if copy is None:
            copy = self.tasks[task_id] = StoredCopy(f"task:{task_id}", "task", task_id, context_id)
        return copy

    def _known(self, task_id: str | None) -> StoredCopy | None:
        """A task seen in this file, back in memory if it was put aside."""
        copy = self.tasks.get(task_id)
        if copy is None and isinstance(task_id, str):
            copy = self._aside.take(task_id)
            if copy is not None:
                self.tasks[task_id] = copy
        return copy

    def _link_request(self, rpc_id: Any, copy: StoredCopy) -> None:
        request = self.requests.pop(rpc_id, None) if rpc_id is not None else None
        if request is not None:
            copy.add_message(request)

    def loose_messages(self) -> Iterator[tuple[str, Message, str | None]]:
        """Messages outside any task event (with the id and locator of the record each came in), in the
        order they came."""
        for batch in self._aside.loose_batches():
            yield from batch
        yield from self.loose

    def copies(self) -> Iterator[StoredCopy]:
        """The file's stored copies: its tasks (those in memory, then those put aside, read back one
        at a time), then its standalone agent messages."""
        standalone: dict[str, StoredCopy] = {}
        pending_user: dict[str | None, Message] = {}
        to_tasks: dict[str, list[tuple[str, Message, str | None]]] = defaultdict(list)
        for record_id, message, locator in self.loose_messages():
            if message.task_id and (message.task_id in self.tasks or self._aside.context_of(message.task_id)[0]):
                to_tasks[message.task_id].append((record_id, message, locator))
            elif message.role == "agent" and message.message_id is not None:
                copy = standalone.get(message.message_id)
                if copy is None:
                    copy = standalone[message.message_id] = StoredCopy(
                        f"message:{message.message_id}",
                        "message",
                        message.task_id,
                        message.context_id,
                        message_id=message.message_id,
                        metadata=message.metadata,
                    )
                    question = pending_user.pop(message.context_id, None)
                    if question is not None:
                        copy.add_message(question)
                copy.add_message(message)
                copy.touch(record_id, locator)
            elif message.role == "user":
                pending_user[message.context_id] = message
        for task in chain([self.tasks.pop(task_id) for task_id in list(self.tasks)], self._aside.copies()):
            for record_id, message, locator in to_tasks.pop(task.task_id, ()):
                task.add_message(message)
                task.touch(record_id, locator)
            yield task
        self._aside.close()
        yield from standalone.values()
