"""Spool segments of `archiver record` (the recording proxy) as the ingest meets them on disk.

A segment is told by its content and read by the core (`archiver/core/src/read/segments.rs`): a unary
segment is JSON Lines whose every line is an exchange envelope (`{"a2a_record": 1, ...}`), a stream
segment an SSE capture whose envelopes are comment lines (`: a2a-record {...}`); every result read from
one is an origin copy. Files still being written (`*.open`) are never read.
"""

from __future__ import annotations

OPEN_SUFFIX = ".open"
"""A segment the proxy is still writing: never read by any ingest."""


def is_open(name: str) -> bool:
    return name.endswith(OPEN_SUFFIX)
