"""Spool segments of `archiver record` (the recording proxy), told by content.

A unary segment is JSON Lines whose every line is an exchange envelope (`{"a2a_record": 1, ...}`): it is
read as JSON Lines. A stream segment is an SSE capture whose envelopes are comment lines
(`: a2a-record {...}`): each envelope line begins a record, which runs to the blank line ending the event
it announces (a `stream-open` or `stream-end` envelope is a record of its own). The envelope's JSON
rides with its record (`Record.envelope`); what the envelope means is read in
`archiver.understand.recorded`. Files still being written (`*.open`) are never read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from .records import Record

OPEN_SUFFIX = ".open"
"""A segment the proxy is still writing: never read by any ingest."""

ENVELOPE_LINE = b": a2a-record "
UNARY_SEGMENT = "spool-jsonl"
STREAM_SEGMENT = "spool-sse"
SEGMENTS = (UNARY_SEGMENT, STREAM_SEGMENT)
"""The containers of spool segments: every result read from one is an origin copy."""

_UNARY_MARK = re.compile(rb'\{\s*"a2a_record"\s*:')


def segment_kind(head: bytes) -> str | None:
    """The container of a spool segment from its first bytes, or None for any other file."""
    if head.startswith(ENVELOPE_LINE):
        return STREAM_SEGMENT
    if _UNARY_MARK.match(head):
        return UNARY_SEGMENT
    return None


def is_open(name: str) -> bool:
    return name.endswith(OPEN_SUFFIX)


def read_stream_segment(stream: BinaryIO) -> Iterator[Record]:
    """A stream segment's records: an envelope line and the event lines after it, through the blank line
    that ends the event; a blank line alone is filler. Concatenated, the records give the file's bytes."""
    from .containers import LineTooLongError, _sse_lines

    seq, block, start = 0, [], (1, 0)

    def emit() -> Record:
        nonlocal seq
        line, offset = start
        raw = b"".join(block)
        envelope = block[0][len(ENVELOPE_LINE) :].strip() if block[0].startswith(ENVELOPE_LINE) else None
        data = [_data(piece) for piece in block if piece.startswith(b"data:")]
        seq += 1
        if envelope is None and not data:
            return Record(seq - 1, f"line {line}", raw, "filler", line=line, byte_offset=offset)
        payload = b"\n".join(data) if data else None
        return Record(
            seq - 1, f"line {line}", raw, "json", line=line, byte_offset=offset, payload=payload, envelope=envelope
        )

    with stream:
        for number, offset, line in _sse_lines(stream):
            if isinstance(line, LineTooLongError):
                if block:
                    yield emit()
                    block = []
                yield Record(seq, f"line {number}", b"", "unreadable", line=number, byte_offset=offset, error=str(line))
                seq += 1
                continue
            if block and line.startswith(ENVELOPE_LINE):
                yield emit()
                block = []
            if not block:
                start = (number, offset)
            block.append(line)
            if not line.strip(b"\r\n"):
                yield emit()
                block = []
        if block:
            yield emit()


def _data(line: bytes) -> bytes:
    value = line.rstrip(b"\r\n")[len(b"data:") :]
    return value[1:] if value.startswith(b" ") else value
