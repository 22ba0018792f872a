"""A fuzzing loop kept in the repository (issue 26, item 7): hypothesis drives the core's container readers
and dialects with the samples mutated (bytes, and the JSON trees inside them), and `archiver serve` with
query strings of every parameter it knows and some it does not. Each run is bounded (examples per test,
`ARCHIVER_FUZZ_EXAMPLES`, default 150) and seeded (`ARCHIVER_FUZZ_SEED`, default fixed, so CI is
repeatable; give another to explore). What it found became the regression tests at the end of this file.

    ARCHIVER_FUZZ_EXAMPLES=5000 ARCHIVER_FUZZ_SEED=$RANDOM pytest tests/test_fuzz.py
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from urllib.parse import quote

import duckdb
import orjson
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from archiver import _core
from archiver.archive import Archive
from archiver.ingest import expand
from archiver.load.schemas import arrow_schemas
from archiver.serve import create_app
from archiver.store import migrations
from tests.core_records import read
from tests.transcripts import SAMPLES

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("ARCHIVER_FUZZ_EXAMPLES") or 150)
SEED = int(os.environ.get("ARCHIVER_FUZZ_SEED") or 26)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

SAMPLE_FILES = [Path(source.path) for source in expand([str(SAMPLES)])]
CORPUS = sorted(path.read_bytes() for path in SAMPLE_FILES if path.suffix not in (".sqlite", ".gz"))
"""The seeds: every sample transcript but SQLite files and gzip (the tests compress), as bytes."""
TOKENS = [
    b"\n", b"\r", b"\r\n", b"\n\n", b" ", b"\x00", b"\xff", b"\xef\xbb\xbf", b"data: ", b"event: x\n", b": ping\n\n",
    b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b"null", b"1e999", b"-0", b"NaN", b'"\\ud800"',
    b": a2a-record {}\n", b'{"a2a_record": 1}\n', b'"kind"', b'"parts"', b'"mediaType"', b'"data"',
    b'"application/vnd.upperhand.citations+json"', b'"result"', b'"jsonrpc": "2.0"',
]  # fmt: skip
"""Bytes worth inserting: line ends, SSE fields, JSON punctuation and the keys the dialects read."""


@st.composite
def mutated(draw) -> bytes:
    """A sample's bytes after a few mutations: bytes flipped, tokens inserted, ranges cut or repeated."""
    data = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "insert", "cut", "repeat", "truncate"]))
        if action == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 40))
        elif action == "cut":
            del data[at : at + draw(st.integers(1, 400))]
        elif action == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 400))] * draw(st.integers(1, 3))
        else:
            del data[at:]
    return bytes(data)


LIMITS = st.sampled_from([(64, 1 << 20), (1000, 1 << 20), (1 << 20, 1 << 30), (1 << 20, 4096)])
"""(record limit, gzip limit) pairs: tiny ones reach the bounds' paths."""


@seed(SEED)
@FUZZ
@given(data=mutated(), limits=LIMITS, name=st.sampled_from(["x.jsonl", "x.json", "x.sse", "x"]), zipped=st.booleans())
def test_the_readers_hold_and_tile_their_bytes(data, limits, name, zipped):
    record_limit, gzip_limit = limits
    given_bytes = gzip.compress(data, mtime=0) if zipped else data
    found = read(name, data=given_bytes, record_limit=record_limit, gzip_limit=gzip_limit)
    container, compression, records = found.container, found.compression, found.records
    assert container in {"json", "jsonl", "sse", "empty", "binary", "spool-jsonl", "spool-sse", "unreadable"}
    assert compression == ("gzip" if zipped else None)
    seqs = [record["seq"] for record in records]
    assert seqs == sorted(set(seqs)), seqs
    kinds = {record["kind"] for record in records}
    if "unreadable" not in kinds and container not in ("binary", "unreadable"):
        assert b"".join(record["raw"] for record in records) == data
    for record in records:
        if record["kind"] == "filler" and len(record["raw"]) > max(record_limit, 1):
            assert b"\n" not in record["raw"][:-1], "a run of filler past the record limit"


@pytest.fixture(scope="module")
def schemas() -> dict:
    con = duckdb.connect()
    migrations.upgrade(con)
    return arrow_schemas(con)


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["application/vnd.upperhand.citations+json", "TASK_STATE_COMPLETED", "completed", "data", "task"]),
)
JSON_VALUE = st.recursive(
    JSON_LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
)


def _parses(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


JSON_LINES = sorted({line for data in CORPUS for line in data.splitlines() if line[:1] in b"{[" and _parses(line)})
"""Every JSON line of the samples: the trees the dialects are fed, mutated."""


def _paths(value, prefix=()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _replace(value, path: tuple, new):
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(copy[head], tuple(rest), new)
    return copy


@st.composite
def mutated_trees(draw) -> bytes:
    """JSON Lines of sample trees with nodes replaced (by other JSON, or by other nodes of the samples),
    keys renamed to their snake_case or camelCase twins, or removed."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        tree = orjson.loads(draw(st.sampled_from(JSON_LINES)))
        for _ in range(draw(st.integers(1, 5))):
            paths = _paths(tree)
            path = draw(st.sampled_from(paths))
            action = draw(st.sampled_from(["value", "graft", "rename", "drop"]))
            if action == "value":
                tree = _replace(tree, path, draw(JSON_VALUE))
            elif action == "graft":
                other = orjson.loads(draw(st.sampled_from(JSON_LINES)))
                tree = _replace(tree, path, _get(other, draw(st.sampled_from(_paths(other)))))
            elif path and isinstance(path[-1], str):
                parent = _get(tree, path[:-1])
                renamed = {k: v for k, v in parent.items() if k != path[-1]}
                if action == "rename":
                    renamed[_twin(path[-1])] = parent[path[-1]]
                tree = _replace(tree, path[:-1], renamed)
        lines.append(orjson.dumps(tree))
    return b"\n".join(lines) + b"\n"


def _get(value, path: tuple):
    for step in path:
        value = value[step]
    return value


def _twin(key: str) -> str:
    """snake_case for camelCase and back."""
    if "_" in key:
        head, *rest = key.split("_")
        return head + "".join(part.title() for part in rest)
    return "".join("_" + char.lower() if char.isupper() else char for char in key)


def index_of(data: bytes, schemas: dict) -> dict[str, int]:
    """Rows per table the core's index makes of `data` (a file given in memory)."""
    spec = {"path": "/fuzz/x.jsonl", "key": "0" * 64, "sha256": "0" * 64, "size": len(data), "data": data}
    counts: dict[str, int] = {}
    for name, batch in _core.index_files([spec], schemas, 1_767_225_600_000_000, 1 << 20, 1 << 30):
        if name is None:
            counts = {}
        else:
            counts[name] = counts.get(name, 0) + pa.record_batch(batch).num_rows
    return counts


@seed(SEED)
@FUZZ
@given(data=mutated_trees())
def test_the_dialects_hold_on_mutated_trees(schemas, data):
    counts = index_of(data, schemas)
    assert counts.get("records", 0) == data.count(b"\n")


@seed(SEED)
@FUZZ
@given(data=mutated())
def test_the_index_holds_on_mutated_bytes(schemas, data):
    assert index_of(data, schemas).get("records", 0) >= 1 or data.strip() == b""


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("fuzz") / "archive.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(SAMPLES)])
        ids = [i for (i,) in archive.con.execute("SELECT result_key FROM results LIMIT 5").fetchall()]
    with TestClient(create_app(db), raise_server_exceptions=False, base_url="http://localhost") as client:
        client.result_ids = ids
        yield client


PARAMS = [
    "study", "period", "table", "column", "function", "agent", "task", "context", "source", "since", "until",
    "min_n", "max_n", "valid", "verdict", "kind", "order_by", "copy", "rule", "severity", "size", "page", "format",
    "token", "q", "_col", "x",
]  # fmt: skip
VALUES = st.one_of(
    st.sampled_from([
        "", "0", "-1", "1e309", "nan", "inf", "9999-12-31", "10000-01-01", "0000-01-01", "2026-02-30", "2026-13-01",
        "99999999999999999999", "' OR 1=1 --", "%00", "\x00", "../../etc/passwd", "//evil.example/x", "<script>",
        "claims", "citations", "results", "error", "warning", "reproduced", "true", "false", "Wave 1", "share",
    ]),
    st.text(max_size=30),
)  # fmt: skip
PATHS = st.sampled_from(
    [
        "/", "/index.json", "/search", "/search.json", "/audit", "/audit.json", "/verify", "/verify.json",
        "/result/{id}", "/result/{id}.json", "/result/{junk}", "/study/{junk}", "/column/{junk}", "/download/{junk}",
        "/download/claims.csv", "/download/claims.parquet",
    ]
)  # fmt: skip


@seed(SEED)
@FUZZ
@given(
    path=PATHS,
    junk=st.text(min_size=1, max_size=20),
    query=st.lists(st.tuples(st.sampled_from(PARAMS) | st.text(max_size=8), VALUES), max_size=6),
)
def test_serve_answers_every_query_without_a_server_error(client, path, junk, query):
    url = path.format(id=quote(client.result_ids[0], safe=""), junk=quote(junk, safe=""))
    response = client.get(url, params=query, follow_redirects=False)
    assert response.status_code < 500, (url, query, response.text[:300])
    assert "content-security-policy" in response.headers
    if 300 <= response.status_code < 400:
        assert not response.headers["location"].startswith(("//", "http:", "https:")), response.headers["location"]
