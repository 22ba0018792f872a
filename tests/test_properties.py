"""Property-based tests: the compiled core never crashes on any JSON, raw records round-trip. (That claims are
exactly the numeric leaves is the core's own property: archiver/core/tests/behaviours/cite.rs.)"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver.prepare import prepare
from archiver.read.containers import GZIP_LIMIT, RECORD_LIMIT, SourceFile
from archiver.read.version import SourceVersion
from tests.core_records import read, schemas
from tests.stored import WHOLE_RECORDS

A2A_KEYS = [
    "id",
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "kind",
    "status",
    "state",
    "artifacts",
    "artifact",
    "history",
    "parts",
    "content",
    "text",
    "data",
    "file",
    "url",
    "raw",
    "mediaType",
    "metadata",
    "mimeType",
    "role",
    "messageId",
    "message",
    "task",
    "statusUpdate",
    "artifactUpdate",
    "msg",
    "result",
    "error",
    "jsonrpc",
    "method",
    "params",
    "append",
    "lastChunk",
    "final",
    "tasks",
    "name",
    "skills",
    "timestamp",
    "code",
    "index",
    "type",
    "data_part_compat",
    "study",
    "period",
    "base",
    "source",
    "n",
    "value",
]
A2A_WORDS = [
    "task",
    "message",
    "status-update",
    "artifact-update",
    "text",
    "data",
    "agent",
    "user",
    "ROLE_AGENT",
    "completed",
    "TASK_STATE_WORKING",
    "2.0",
    "application/vnd.upperhand.citations+json",
    "t1",
    "c1",
    "",
    "2026-04-20T10:00:00Z",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(A2A_WORDS)
)
keys = st.sampled_from(A2A_KEYS) | st.text(max_size=6)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6), max_leaves=40
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a whole prepare each
@given(st.lists(json_values, min_size=1, max_size=4))
def test_the_normaliser_yields_results_or_a_quarantine_reason(values):
    """Every value, one a line, is understood or quarantined with a reason; what is understood assembles and
    becomes index rows without any other exception."""
    data = b"".join(json.dumps(value).encode() + b"\n" for value in values)
    sha256 = hashlib.sha256(data).hexdigest()
    version = SourceVersion("/x.jsonl", sha256, len(data), sha256, "/x.jsonl")
    (prepared,) = prepare([(SourceFile("/x.jsonl", data), version)], schemas())
    try:
        outcome = prepared.outcome
        assert outcome.container == "jsonl"
        assert outcome.records == len(values)
        assert len(outcome.problems) == outcome.quarantined
        assert outcome.quarantined + outcome.recognised <= outcome.records
        assert all(problem.startswith("/x.jsonl: line ") for problem in outcome.problems), outcome.problems
        assert sum(table.num_rows for name, table in prepared.tables if name == "records") == len(values)
    finally:
        prepared.discard()


line_bodies = st.one_of(
    json_values.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),
    st.sampled_from(
        [
            b"",
            b"   ",
            b": ping",
            b"event: message",
            b"id: 7",
            b"retry: 10",
            b"data:",
            b"data: {",
            b"\xef\xbb\xbf{}",
            b"data: " + orjson.dumps({"kind": "task", "id": "t", "status": {}}),
        ]
    ),
)
endings = st.sampled_from([b"\n", b"\r\n", b"\r", b""])
content = st.lists(st.tuples(line_bodies, endings), max_size=12).map(
    lambda lines: b"".join(body + ending for body, ending in lines)
)
prefixes = st.sampled_from([b"", b"data: ", b": keep-alive\n", b"\xef\xbb\xbf"])


def concatenated(data: bytes) -> tuple[str | None, bytes]:
    """The container the core reads `data` as (given on standard input) and its records' bytes joined."""
    found = read("<stdin>", data=data, record_limit=RECORD_LIMIT, gzip_limit=GZIP_LIMIT)
    return found.container, b"".join(record["raw"] for record in found.records)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(prefixes, content)
def test_records_cover_the_bytes_of_any_jsonl_or_sse_content(prefix, body):
    data = prefix + body
    if data.startswith((b"\x1f\x8b", b"SQLite format 3\x00")):
        return
    container, raw = concatenated(data)
    assert raw == data
    if data:  # compressed: the records cover the decompressed bytes; a file refused whole is kept as stored
        compressed = gzip.compress(data)
        assert concatenated(compressed) == (container, compressed if container == "binary" else data)


COUNTER = itertools.count()


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefixes, content)
def test_raw_records_round_trip_byte_exact_through_ingest(archive, tmp_path, prefix, body):
    data = prefix + body
    if data.startswith((b"\x1f\x8b", b"SQLite format 3\x00")):
        return
    path = tmp_path / f"f{next(COUNTER)}.sse"
    path.write_bytes(data)
    archive.ingest([str(path)], workers=1)
    (held_at,) = archive.con.execute(  # bytes an earlier example stored already are found under its path
        "SELECT coalesce(alias_of, path) FROM sources WHERE path = ?", [str(path)]
    ).fetchone()
    stored = archive.con.execute(
        f"SELECT raw FROM {WHOLE_RECORDS} AS r WHERE source_path = ? ORDER BY seq", [held_at]
    ).fetchall()
    assert b"".join(raw for (raw,) in stored) == data
