"""The unit every container reader yields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Record:
    """One input record, its bytes exactly as read, and where it stood in its source."""

    seq: int
    locator: str
    raw: bytes
    kind: str  # json | row | filler | unreadable
    line: int | None = None
    byte_offset: int | None = None
    payload: bytes | None = None  # the JSON text inside the record, when it differs from raw
    value: Any = None  # a decoded row (SQLite), where no JSON decoding is needed
    error: str | None = None  # why the container could not yield JSON here
    envelope: bytes | None = None  # a spool segment's envelope (`archiver.read.segments`): its JSON text
