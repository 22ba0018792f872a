"""The canonical model every A2A dialect is read into.

Nothing downstream of `archiver.understand` asks which version of A2A an
object came from: readers of v0.1, v0.3 (JSON-RPC and REST) and v1.0 all
produce these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TERMINAL_STATES = frozenset({"completed", "failed", "canceled", "rejected"})


@dataclass
class Part:
    kind: str  # text | data | file | url | raw | unknown
    text: str | None = None
    data: Any = None
    file: Any = None
    media_type: str | None = None
    metadata: dict | None = None
    raw: dict | None = None
    """A Part of kind unknown as it came: no reader could decode it, so it is kept whole."""


@dataclass
class Message:
    message_id: str | None
    role: str  # user | agent | unknown
    parts: list[Part]
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict | None = None


@dataclass
class Artifact:
    artifact_id: str | None
    name: str | None
    parts: list[Part]
    metadata: dict | None = None


@dataclass
class Status:
    state: str | None = None
    timestamp: datetime | None = None
    message: Message | None = None


@dataclass
class Task:
    task_id: str
    context_id: str | None
    status: Status
    artifacts: list[Artifact] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    metadata: dict | None = None


@dataclass
class StatusUpdate:
    task_id: str
    context_id: str | None
    status: Status


@dataclass
class ArtifactUpdate:
    task_id: str
    context_id: str | None
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False


@dataclass
class AgentCard:
    card: dict


@dataclass
class ErrorResponse:
    rpc_id: Any
    code: Any
    message: str | None


@dataclass
class Request:
    """A JSON-RPC request; `message` is the user's message when it sends one."""

    rpc_id: Any
    method: str | None
    message: Message | None


Event = Task | Message | StatusUpdate | ArtifactUpdate | AgentCard | ErrorResponse | Request
