"""Helpers of the bad-input corpus: good records to put around a bad one, and the outcome of an ingest."""

from __future__ import annotations

import orjson

from tests.stored import WHOLE_RECORDS
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task


def good(number: int, context_id: str = "ctx-1") -> bytes:
    """One JSON-RPC response carrying a cited task `t<number>` (no line terminator)."""
    return orjson.dumps(jsonrpc_result({"task": v1_task(f"t{number}", v1_cited_parts(), context_id=context_id)}))


def event(payload: bytes, newline: bytes = b"\n") -> bytes:
    return b"data: " + payload + newline + newline


def ingest(archive, *paths: str):
    """Ingest in this process (workers=1), so a monkeypatched limit applies; returns the summary."""
    return archive.ingest(list(paths), workers=1)


def quarantined(archive, path: str) -> list[tuple[str, str]]:
    """(locator, reason) of the file's records in the `quarantine` view."""
    return rows(archive, "SELECT locator, reason FROM quarantine WHERE source_path = ? ORDER BY line, locator", [path])


def quarantined_raw(archive, path: str) -> list[bytes]:
    return [
        raw
        for (raw,) in rows(archive, "SELECT raw FROM quarantine WHERE source_path = ? ORDER BY line, locator", [path])
    ]


def tasks(archive, path: str) -> list[str]:
    return [t for (t,) in rows(archive, "SELECT task_id FROM results WHERE source_path = ? ORDER BY task_id", [path])]


def stored_bytes(archive, path: str) -> bytes:
    return b"".join(
        raw for (raw,) in rows(archive, f"SELECT raw FROM {WHOLE_RECORDS} r WHERE source_path = ? ORDER BY seq", [path])
    )


def assert_quarantine(archive, summary, path: str, expected: list[tuple[str, str]]) -> None:
    """The exact quarantine of `path`, and the same reasons as one-line problems naming file and locator."""
    assert quarantined(archive, path) == expected
    problems = [p for p in summary.problems if p.startswith(f"{path}: ")]
    assert sorted(problems) == sorted(f"{path}: {locator}: {reason}" for locator, reason in expected)
    assert all("\n" not in problem for problem in problems)
