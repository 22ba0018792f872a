"""Differential tests of the core's readers (`archiver._core`, the `read` stage) against the Python code
they replace (`archiver.read.containers.read_records`): the same sources give the same container,
compression and records, field by field, and every error the same text."""

from __future__ import annotations

import contextlib
import gzip
import os
import random
import sqlite3
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archiver import _core
from archiver.read import containers
from archiver.read.containers import SourceFile, read_records

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = {"record": 1 << 20, "document": 1 << 20, "gzip": 1 << 30, "chunk": 1 << 20}


@contextlib.contextmanager
def bounds(record: int, document: int, gzip_limit: int, chunk: int):
    """The Python readers' limits, as a test sets them (what the environment sets in an ingest)."""
    names = {"RECORD_LIMIT": record, "JSON_DOCUMENT_LIMIT": document, "GZIP_LIMIT": gzip_limit, "LINE_CHUNK": chunk}
    saved = {name: getattr(containers, name) for name in names}
    try:
        for name, value in names.items():
            setattr(containers, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(containers, name, value)


def python_read(source: SourceFile, limits: dict):
    with bounds(limits["record"], limits["document"], limits["gzip"], limits["chunk"]):
        container, compression, records = read_records(source)
        listed = [
            (r.seq, r.locator, r.raw, r.kind, r.line, r.byte_offset, r.payload, r.error, r.envelope) for r in records
        ]
    return container, compression, listed


def core_read(path: str | None, data: bytes | None, name: str, limits: dict):
    return _core.read_records_of(
        os.fsencode(path) if path is not None else None,
        data,
        name,
        limits["record"],
        limits["gzip"],
        limits["chunk"],
        limits["document"],
    )


def assert_same_in_memory(data: bytes, name: str, limits: dict = DEFAULTS) -> None:
    expected = python_read(SourceFile(name, data=data), limits)
    assert core_read(None, data, name, limits) == expected


def assert_same_on_disk(path: Path, name: str | None = None, limits: dict = DEFAULTS) -> None:
    name = name or str(path)
    expected = python_read(SourceFile(name, location=str(path)), limits)
    assert core_read(str(path), None, name, limits) == expected


# Generated line structures -------------------------------------------------------------------------------

PIECES = [
    b'{"a": 1}',
    b"[1, 2]",
    b'{"a2a_record": 1, "kind": "exchange"}',
    b'"text"',
    b"1",
    b"{",
    b"}",
    b"not json",
    b"\x00",
    b"\xef\xbb\xbf",
    b" ",
    b"\t",
    b"\x0b",
    b"\x0c",
    b"data: ",
    b"data:",
    b'data: {"b": [1]}',
    b"event: message",
    b"id: 7",
    b"retry: 100",
    b": keep-alive",
    b': a2a-record {"a2a_record": 1}',
    b"\xff\xfe",
    b"x" * 40,
]
ENDS = [b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b"\r\r", b""]
NAMES = ["capture", "x.jsonl", "X.NDJSON.gz", "x.json", "x.sse", "a.jsonl.GZ"]


@st.composite
def line_structures(draw) -> bytes:
    lines = draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(PIECES), max_size=4), st.sampled_from(ENDS)),
            max_size=12,
        )
    )
    data = b"".join(b"".join(pieces) + end for pieces, end in lines)
    if draw(st.booleans()) and data:
        data = b"\xef\xbb\xbf" + data
    return data


@st.composite
def small_limits(draw) -> dict:
    record = draw(st.sampled_from([3, 8, 16, 40, 1 << 20]))
    return {
        "record": record,
        "document": draw(st.sampled_from([record, 5, 30, 200])),
        "gzip": draw(st.sampled_from([0, 10, 64, 1 << 30])),
        "chunk": draw(st.sampled_from([2, 5, 16, 64, 1 << 20])),
    }


names = st.sampled_from(NAMES)
FAST = settings(max_examples=150, deadline=None)


@FAST
@given(data=line_structures(), name=names, limits=small_limits())
def test_line_structures_in_memory(data, name, limits):
    assert_same_in_memory(data, name, limits)


@settings(max_examples=60, deadline=None)
@given(data=line_structures(), name=names, limits=small_limits())
def test_line_structures_on_disk(tmp_path_factory, data, name, limits):
    path = tmp_path_factory.mktemp("disk") / "input"
    path.write_bytes(data)
    assert_same_on_disk(path, name, limits)


@FAST
@given(
    data=line_structures(),
    name=names,
    limits=small_limits(),
    members=st.integers(1, 3),
    level=st.sampled_from([0, 1, 9]),
)
def test_gzip_in_memory(data, name, limits, members, level):
    cut = len(data) // members
    parts = [data[i * cut : (i + 1) * cut if i < members - 1 else len(data)] for i in range(members)]
    stored = b"".join(gzip.compress(part, compresslevel=level, mtime=0) for part in parts)
    assert_same_in_memory(stored, name, limits)


@st.composite
def damaged_gzip(draw) -> bytes:
    data = draw(line_structures())
    stored = gzip.compress(data, mtime=0) + (
        gzip.compress(draw(line_structures()), mtime=0) if draw(st.booleans()) else b""
    )
    damage = draw(st.sampled_from(["truncate", "flip", "crc", "length", "trailing", "zeros", "header"]))
    if damage == "truncate":
        return stored[: draw(st.integers(2, max(2, len(stored) - 1)))]
    if damage == "flip":
        at = draw(st.integers(2, len(stored) - 1))
        return stored[:at] + bytes([stored[at] ^ draw(st.integers(1, 255))]) + stored[at + 1 :]
    if damage in ("crc", "length"):
        end = len(gzip.compress(data, mtime=0))
        at = end - (8 if damage == "crc" else 4)
        return stored[:at] + bytes([stored[at] ^ 1]) + stored[at + 1 :]
    if damage == "trailing":
        return stored + draw(st.binary(min_size=1, max_size=6))
    if damage == "zeros":
        return stored + b"\x00" * draw(st.integers(1, 5)) + draw(st.sampled_from([b"", b"\x1f", b"\x1f\x8b", b"x"]))
    flags = draw(st.integers(0, 255))
    header = b"\x1f\x8b" + bytes([draw(st.sampled_from([8, 7])), flags]) + b"\x00" * 6
    extra = draw(st.binary(max_size=12))
    return header + extra + zlib.compress(data)[2:-4]


@settings(max_examples=100, deadline=None)
@given(stored=damaged_gzip(), name=names, limits=small_limits())
def test_damaged_gzip_in_memory(stored, name, limits):
    assert_same_in_memory(stored, name, limits)


@settings(max_examples=40, deadline=None)
@given(stored=damaged_gzip(), name=names, limits=small_limits())
def test_damaged_gzip_on_disk(tmp_path_factory, stored, name, limits):
    path = tmp_path_factory.mktemp("gz") / "input.gz"
    path.write_bytes(stored)
    assert_same_on_disk(path, name, limits)


@st.composite
def segments(draw) -> bytes:
    """Spool segments: envelope lines announcing events, events, blank lines; or unary envelopes."""
    if draw(st.booleans()):
        lines = draw(
            st.lists(st.sampled_from([b'{"a2a_record": 1, "n": 2}', b"", b"{", b' {"a2a_record":1}']), min_size=1)
        )
        return b"".join(line + draw(st.sampled_from([b"\n", b"\r\n"])) for line in lines)
    blocks = []
    for _ in range(draw(st.integers(1, 6))):
        envelope = draw(st.sampled_from([b': a2a-record {"a2a_record": 1}  ', b": a2a-record \t", b": a2a-record {}"]))
        body = draw(st.lists(st.sampled_from([b'data: {"x": 1}', b"data:2", b"event: e", b": c", b""]), max_size=4))
        end = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
        blocks.append(b"".join(line + end for line in [envelope, *body]))
    return b"".join(blocks)


@settings(max_examples=80, deadline=None)
@given(data=segments(), limits=small_limits(), compress=st.booleans())
def test_spool_segments(data, limits, compress):
    stored = gzip.compress(data, mtime=0) if compress else data
    assert_same_in_memory(stored, "segment-000001.a2a", limits)


# Larger streams: inflate fed 8 KiB at a time, blocks of 1 MiB ----------------------------------------------


def _lines_of(count: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(
        b'{"n": %d, "text": "%s"}\n'
        % (n, "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(0, 300))).encode())
        for n in range(count)
    )


LARGE = _lines_of(12000, 1)  # ~2 MiB, ~1 MiB compressed
LARGE_STORED = gzip.compress(LARGE, compresslevel=6, mtime=0)


@pytest.mark.parametrize("fraction", [0.1, 0.37, 0.5, 0.73, 0.999])
@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_large_damaged_gzip(fraction, damage):
    at = int(len(LARGE_STORED) * fraction)
    if damage == "flip":
        stored = LARGE_STORED[:at] + bytes([LARGE_STORED[at] ^ 0x55]) + LARGE_STORED[at + 1 :]
    else:
        stored = LARGE_STORED[:at]
    for name in ["big.jsonl", "big.json"]:
        assert_same_in_memory(stored, name, DEFAULTS)


def test_large_gzip_past_the_limit_and_a_document_past_its_limit():
    assert_same_in_memory(LARGE_STORED, "big.jsonl", dict(DEFAULTS, gzip=1_500_000))
    assert_same_in_memory(LARGE_STORED, "big.json", dict(DEFAULTS, document=1_700_000, record=1_700_000))
    assert_same_in_memory(LARGE_STORED, "big.json", dict(DEFAULTS, document=5_000_000, gzip=3_100_000))


def test_large_files_on_disk_span_blocks(tmp_path):
    (tmp_path / "big").write_bytes(LARGE)
    assert_same_on_disk(tmp_path / "big", "big.jsonl")
    assert_same_on_disk(tmp_path / "big", "big.json", dict(DEFAULTS, record=1_500_000, document=1_500_000))
    assert_same_on_disk(tmp_path / "big", "big.json", dict(DEFAULTS, record=5_000_000, document=5_000_000))
    sse = b"".join(b": ping\r\ndata: " + line.rstrip(b"\n") + b"\r\n\r\n" for line in LARGE.splitlines(keepends=True))
    (tmp_path / "big.sse").write_bytes(sse)
    assert_same_on_disk(tmp_path / "big.sse")


def test_highly_compressed_stream_with_a_flipped_byte():
    data = (b'{"a": "' + b"z" * 5000 + b'"}\n') * 600
    stored = gzip.compress(data, mtime=0)
    for at in (len(stored) // 3, len(stored) // 2, len(stored) - 20):
        broken = stored[:at] + bytes([stored[at] ^ 0xFF]) + stored[at + 1 :]
        assert_same_in_memory(broken, "z.jsonl", DEFAULTS)
        assert_same_in_memory(broken, "z.json", dict(DEFAULTS, record=30 << 20, document=30 << 20))


def test_long_lines_stream_past_the_record_limit():
    data = b"a" * 3_000_000 + b"\n" + b'{"b": 1}\n' + b"c" * 2_500_000
    limits = dict(DEFAULTS, record=2 << 20, document=2 << 20)
    assert_same_in_memory(data, "long.jsonl", limits)
    assert_same_in_memory(gzip.compress(data, mtime=0), "long.jsonl", limits)
    sse = b"data: " + b"d" * 2_200_000 + b"\n\n" + b"data: 1\r\rdata: 2\n"
    assert_same_in_memory(sse, "long", limits)


# Files that cannot be read -----------------------------------------------------------------------------


def test_missing_file_directory_fifo_and_links(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    dangling = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", dangling)
    for path in [tmp_path / "missing.jsonl", tmp_path, fifo, loop, dangling, Path("/dev/null")]:
        assert_same_on_disk(path)


def test_a_name_not_in_utf8(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), b"bad\xff.jsonl")
    with open(path, "wb") as handle:
        handle.write(b'{"a": 1}\n')
    source = SourceFile.on_disk(os.fsdecode(path))
    expected = python_read(source, DEFAULTS)
    assert core_read(os.fsdecode(path), None, source.path, DEFAULTS) == expected


def test_head_of_a_file_on_disk_is_its_first_read(tmp_path):
    """Python tells a file's container from its first buffered read (st_blksize bytes), not 64 KiB."""
    data = b" " * 5000 + b'{"a": 1}\n{"b": 2}\n'
    (tmp_path / "spaces").write_bytes(data)
    assert_same_on_disk(tmp_path / "spaces")
    assert_same_in_memory(data, "spaces")


def test_sources_read_elsewhere(tmp_path):
    """Unreadable paths, rows of a task store and refused files, as Python hands them over."""
    assert _core.read_source_of("unreadable", reason="cannot read the file: gone") == python_read(
        SourceFile("x", unreadable="cannot read the file: gone"), DEFAULTS
    )
    store = tmp_path / "tasks.sqlite"
    with sqlite3.connect(store) as con:
        con.execute("CREATE TABLE tasks (id TEXT, context_id TEXT, status TEXT, artifacts BLOB)")
        con.execute("INSERT INTO tasks VALUES ('t1', 'c1', '{\"state\": \"completed\"}', x'c3a9ff')")
    con.close()
    container, compression, records = python_read(SourceFile(str(store)), DEFAULTS)
    rows = [(locator, raw) for _, locator, raw, *_ in records]
    core = _core.read_source_of("rows", container=container, rows=rows)
    assert core[:2] == (container, compression)
    assert [r[:4] + r[4:6] + r[7:] for r in core[2]] == [r[:4] + r[4:6] + r[7:] for r in records]
    assert [r[6] for r in core[2]] == [r[2] for r in records]
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x01" * 200)
    container, compression, records = python_read(SourceFile(str(bad)), DEFAULTS)
    refused = _core.read_source_of("refused", container=container, reason=records[0][7], path=os.fsencode(bad))
    assert refused == (container, compression, records)


# Every file the tests ingest ---------------------------------------------------------------------------


def _sample_files() -> list[Path]:
    roots = [ROOT / "sample_transcripts", ROOT / "tests"]
    return sorted(
        path
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc", ".sqlite") and "__pycache__" not in path.parts
    )


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_sample_files(path):
    assert_same_on_disk(path)
    assert_same_in_memory(path.read_bytes(), str(path))
    assert_same_in_memory(gzip.compress(path.read_bytes(), mtime=0), str(path) + ".gz")


def test_a_first_line_with_an_integer_past_a_double_is_the_known_divergence():
    """orjson refuses an integer too large for a double ("number is infinity"); the core's `decode`, as
    `archiver.read.decode` does, reads it exactly. `detect` asks for orjson's validity of a first line,
    so such a first line (in a file without a JSON Lines extension) tells JSON Lines to the core and a
    JSON document to Python. Named in the read stage's report."""
    data = b'{"n": ' + b"9" * 400 + b'}\n{"n": 1}\n'
    assert python_read(SourceFile("x", data=data), DEFAULTS)[0] == "json"
    assert core_read(None, data, "x", DEFAULTS)[0] == "jsonl"
    assert_same_in_memory(data, "x.jsonl")


def test_detect_agrees():
    heads = [b"", b"\xef\xbb\xbf", b"SQLite format 3\x00", b"\x00x", b": a2a-record {", b"\n data: x", b"{}"]
    for head in heads:
        assert _core.detect_container(head, "x") == containers.detect(head, "x")
