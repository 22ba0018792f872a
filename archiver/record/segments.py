"""The spool's segment files, as the recording proxy writes them (the spool contract: docs/record.md).

A segment is written as `<name>.open`, and closed (flushed, fsynced, renamed to `<name>`, its folder
fsynced) when it reaches `segment_bytes` or `segment_seconds`; a closed segment never changes. Unary
exchanges go to JSON Lines segments (`.jsonl`), streams to SSE captures (`.sse`) whose `: a2a-record`
comment lines are the envelopes. Not to be confused with `archiver.load.spool`, the ingest's temporary files.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from ..errors import UsageError
from . import SEGMENT_BYTES, SEGMENT_SECONDS

RECORD_VERSION = 1
ENVELOPE = b": a2a-record "
"""What starts an envelope line of a stream segment: an SSE comment, so that SSE readers pass it by."""


def envelope(kind: str, **fields) -> dict:
    """A record's envelope (the spool contract, docs/record.md): the version and its kind, then `fields` in
    the order given, which is their order in its JSON."""
    return {"a2a_record": RECORD_VERSION, "kind": kind, **fields}


def stream_end(exchange: str, at: str, events: int, status: int | None, end: str) -> dict:
    """The envelope ending a stream: its `events` recorded, the response's `status`, and how it ended."""
    return envelope("stream-end", exchange=exchange, time=at, events=events, status=status, end=end)


def timestamp(at: float | None = None) -> str:
    """Now (or `at`, seconds since the epoch) in RFC 3339 UTC with microseconds: 2026-11-30T17:40:00.123456Z."""
    moment = datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class SpoolSettings:
    folder: Path
    proxy_id: str
    segment_bytes: int = SEGMENT_BYTES
    segment_seconds: float = SEGMENT_SECONDS


class SpoolWriteError(OSError):
    """A record that could not be written (`reason`: disk-full or write-error); the segment is as before it."""

    def __init__(self, reason: str, cause: OSError) -> None:
        super().__init__(cause.errno, f"{reason}: {cause}")
        self.reason = reason


def _reason(exc: OSError) -> str:
    return "disk-full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "write-error"


class Segment:
    """One segment being written: appends whole records, or nothing of one that fails."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / name
        self.opened = time.monotonic()
        self.size = 0
        self.listed = False  # its folder was fsynced since it was made (the durable mode's `sync`)
        try:
            self.fd = os.open(f"{self.path}.open", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except OSError as exc:
            raise SpoolWriteError(_reason(exc), exc) from exc

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError as exc:
            os.ftruncate(self.fd, self.size)  # no partial record is left behind
            raise SpoolWriteError(_reason(exc), exc) from exc
        self.size += len(data)

    def sync(self) -> None:
        """Its bytes on disk (fsync), and its name in its folder the first time."""
        try:
            os.fsync(self.fd)
            if not self.listed:
                _fsync_folder(self.path.parent)
                self.listed = True
        except OSError as exc:
            raise SpoolWriteError(_reason(exc), exc) from exc

    def close(self) -> Path | None:
        """Closed into place (fsynced, renamed, its folder fsynced); an empty one is deleted (None)."""
        opened = Path(f"{self.path}.open")
        if self.size == 0:
            os.close(self.fd)
            opened.unlink(missing_ok=True)
            return None
        _into_place(self.fd, self.path)
        return self.path


def _into_place(fd: int, path: Path) -> None:
    """Close a segment (`fd`, of `<path>.open`) into place: fsynced, renamed to `path`, its folder fsynced."""
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(f"{path}.open", path)
    _fsync_folder(path.parent)


def _fsync_folder(path: Path) -> None:
    folder = os.open(path, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class SegmentWriter:
    """Writes records into the spool's current segments, rotating them by size and age. Used by one thread.

    Records: `exchange(envelope)` for a unary exchange; `stream_open(envelope)`, `event(...)` and
    `stream_end(envelope)` for a stream. A stream still open when its segment closes continues in the next,
    where its `stream-open` envelope is repeated with `"continued": true` before its next line.
    """

    def __init__(self, settings: SpoolSettings, on_closed: Callable[[Path], None] | None = None) -> None:
        self.settings = settings
        self.on_closed = on_closed
        self.seq = 0
        self.current: dict[str, Segment] = {}  # suffix (jsonl, sse): its open segment
        self.streams: dict[str, dict] = {}  # exchange id: its stream-open envelope
        self.in_segment: set[str] = set()  # the streams whose stream-open is in the current .sse segment
        self.written: set[str] = set()  # the open streams whose stream-open is in some segment
        self.events: dict[str, int] = {}  # exchange id: its events so far
        try:
            settings.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"the spool folder {settings.folder} cannot be made: {exc.strerror}", "--spool") from exc
        self.lock = _hold(settings.folder)
        left = [_close_into_place(Path(str(opened)[: -len(".open")])) for opened in _left_open(settings.folder)]
        self.recovered = [path for path in left if path is not None]  # an earlier proxy's, killed

    def exchange(self, envelope: dict) -> None:
        self._append("jsonl", orjson.dumps(envelope) + b"\n")

    def stream_open(self, envelope: dict) -> None:
        exchange = envelope["exchange"]
        self.streams[exchange] = envelope
        self.events[exchange] = 0
        try:
            self._append_to_stream(exchange, b"")
        except OSError:
            self.streams.pop(exchange, None)
            self.events.pop(exchange, None)
            raise

    def event(self, exchange: str, seq: int, at: float, lines: bytes) -> None:
        """One event of a stream, received whole by the proxy at `at` (seconds since the epoch)."""
        head = envelope("event", exchange=exchange, seq=seq, time=timestamp(at))
        self.events[exchange] = seq + 1
        self._append_to_stream(exchange, _envelope_line(head) + lines)

    def stream_end(self, envelope: dict) -> None:
        exchange = envelope["exchange"]
        try:
            self._append_to_stream(exchange, _envelope_line(envelope))
        finally:
            self.streams.pop(exchange, None)
            self.events.pop(exchange, None)
            self.in_segment.discard(exchange)
            self.written.discard(exchange)

    def knows(self, exchange: str) -> bool:
        """Whether a stream's opening was written (its events can be attributed)."""
        return exchange in self.streams

    def _append_to_stream(self, exchange: str, data: bytes) -> None:
        """Append to the stream segment; first the stream's stream-open when this segment does not hold it yet
        (with `"continued": true` when an earlier segment did)."""
        opening = self.streams.get(exchange)
        segment = self._segment("sse", len(data) + (512 if exchange not in self.in_segment else 0))
        head = b""
        if opening is not None and exchange not in self.in_segment:  # after `_segment`, which may rotate
            head = _envelope_line({**opening, "continued": True} if exchange in self.written else opening)
        segment.write(head + data)
        self.in_segment.add(exchange)
        if opening is not None:
            self.written.add(exchange)

    def _append(self, suffix: str, data: bytes) -> None:
        self._segment(suffix, len(data)).write(data)

    def _segment(self, suffix: str, size: int) -> Segment:
        """The open segment of that kind, a new one if `size` more bytes would take it past `segment_bytes`."""
        segment = self.current.get(suffix)
        if segment is not None and segment.size and segment.size + size > self.settings.segment_bytes:
            self._close(suffix)
            segment = None
        if segment is None:
            segment = self.current[suffix] = Segment(self.settings.folder, self._name(suffix))
        return segment

    def _name(self, suffix: str) -> str:
        self.seq += 1
        moment = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        return f"rec-{moment}-{self.settings.proxy_id}-{self.seq:06d}.{suffix}"

    def sync(self) -> None:
        """Every record written so far on disk (the durable mode's fsync)."""
        for segment in self.current.values():
            segment.sync()

    def rotate_old(self) -> None:
        """Close the segments open longer than `segment_seconds`."""
        now = time.monotonic()
        for suffix, segment in list(self.current.items()):
            if now - segment.opened >= self.settings.segment_seconds:
                self._close(suffix)

    def _close(self, suffix: str) -> None:
        segment = self.current.pop(suffix)
        if suffix == "sse":
            self.in_segment.clear()
        closed = segment.close()
        if closed is not None and self.on_closed is not None:
            self.on_closed(closed)

    def close(self, at: str | None = None) -> None:
        """End the streams still open (`proxy-shutdown`), then close every segment."""
        for exchange in list(self.streams):
            status = self.streams[exchange].get("status")
            ending = stream_end(exchange, at or timestamp(), self.events.get(exchange, 0), status, "proxy-shutdown")
            try:
                self.stream_end(ending)
            except OSError:
                self.streams.pop(exchange, None)
        for suffix in list(self.current):
            self._close(suffix)
        os.close(self.lock)  # the spool is free for the next proxy


LOCK_NAME = ".archiver-record.lock"


def _hold(folder: Path) -> int:
    """The spool's lock, held while this proxy writes it: one proxy per spool, so that a segment still
    `.open` when a proxy starts is one an earlier proxy left (killed before closing it)."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise UsageError(f"the spool folder {folder} is in use by another archiver record", "--spool") from None
    return fd


def _left_open(folder: Path) -> list[Path]:
    return sorted(folder.glob("rec-*.open"))


def _close_into_place(path: Path) -> Path | None:
    """A segment an earlier proxy left open, closed into place as it is (an empty one deleted: None): whole
    records read as they were written, and a record cut short by the kill is quarantined by the ingest,
    which says what was lost."""
    opened = Path(f"{path}.open")
    if opened.stat().st_size == 0:
        opened.unlink()
        return None
    _into_place(os.open(opened, os.O_RDONLY), path)
    return path


def _envelope_line(envelope: dict) -> bytes:
    return ENVELOPE + orjson.dumps(envelope) + b"\n"
