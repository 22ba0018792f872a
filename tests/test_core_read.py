"""The core's readers (`archiver._core`, the `read` stage) against the Python readers they replaced
(`archiver.read.containers.read_records`), frozen: the sources the differential tests generated (line
structures, gzip members, damaged gzip, spool segments, large streams, files that cannot be read) and
every sample and test-corpus file, with the container, compression and records (field by field, every
error's text) that the Python code gave, are in `tests/snapshots/core/read.jsonl.gz`
(`tests/snapshots/core/make.py` wrote them from the tag `python-normaliser-last`). The core must give
them exactly, but for the two bounds added since (issue 26), which the comparison applies to both sides:
a run of filler records is one record (`as_one_filler_a_line` splits it back), and an SSE event longer than
the record limit is an unreadable record without its bytes (`with_sse_events_bounded` applies that to a
stored output, where the output is stored whole)."""

from __future__ import annotations

import functools
import gzip
import os
import random
import re
import sqlite3
from pathlib import Path

import pytest

from archiver import _core
from tests.snapshots.core import frozen

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = {"record": 1 << 20, "document": 1 << 20, "gzip": 1 << 30, "chunk": 1 << 20}
SNAPSHOT = frozen.read("read")


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


def assert_frozen(test: str, output_of, at_least: int) -> None:
    cases = [_bounded(case) for case in SNAPSHOT[test]]
    assert len(cases) >= at_least, (test, len(cases))
    found = frozen.mismatches(cases, lambda given: as_one_filler_a_line(output_of(given)))
    assert not found, "\n".join(found)


BOM = b"\xef\xbb\xbf"
SSE_CONTAINERS = ("sse", "spool-sse")


def _is_read(output) -> bool:
    return isinstance(output, (list, tuple)) and len(output) == 3 and isinstance(output[2], list)


def as_one_filler_a_line(output):
    """A reader's output with each run of filler split back into the records the Python readers made:
    a blank line each (JSON Lines), a block through its blank line each (SSE), each with its own seq."""
    if not _is_read(output):
        return output
    container, compression, records = output
    split = []
    for record in records:
        seq, _locator, raw, kind, line, offset, *_rest = record
        if kind != "filler":
            split.append(record)
            continue
        sse = container in SSE_CONTAINERS
        pieces = _sse_blocks(raw, offset) if sse else [(piece, 1) for piece in re.findall(rb"[^\n]*\n|[^\n]+$", raw)]
        for number, (piece, lines) in enumerate(pieces):
            payload = None if sse else piece.removeprefix(BOM) if offset == 0 else piece
            split.append((seq + number, f"line {line}", piece, "filler", line, offset, payload, None, None))
            line, offset = line + lines, offset + len(piece)
    return (container, compression, split)


def _sse_blocks(raw: bytes, offset: int) -> list[tuple[bytes, int]]:
    """SSE blocks of filler (each through the empty line that ends it) and how many lines each is."""
    blocks, block, lines = [], b"", 0
    for piece in re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", raw):
        block, lines = block + piece, lines + 1
        content = piece[len(BOM) :] if offset == 0 and block == piece and piece.startswith(BOM) else piece
        if content.rstrip(b"\r\n") == b"":
            blocks.append((block, lines))
            block, lines = b"", 0
    if block:
        blocks.append((block, lines))
    return blocks


def _bounded(case: dict) -> dict:
    if "out" not in case or not isinstance(case["in"], dict) or "limits" not in case["in"]:
        return case
    return {**case, "out": with_sse_events_bounded(case["out"], case["in"]["limits"]["record"])}


def with_sse_events_bounded(output, record_limit: int):
    """A stored output with each SSE event longer than the record limit as the core now gives it."""
    if not _is_read(output) or output[0] not in SSE_CONTAINERS:
        return output
    records = []
    for record in output[2]:
        seq, locator, raw, kind, line, offset, _payload, _error, _envelope = record
        if kind in ("json", "filler") and len(raw) > record_limit:
            said = (
                f"an SSE event of {len(raw)} bytes, past the record limit of {record_limit} bytes "
                "(ARCHIVER_RECORD_LIMIT); its bytes are not stored"
            )
            record = [seq, locator, b"", "unreadable", line, offset, None, said, None]
        records.append(record)
    return [output[0], output[1], records]


def in_memory(given: dict):
    return core_read(None, given["data"], given["name"], given["limits"])


def on_disk_in(directory: Path):
    def read(given: dict):
        path = directory / "input"
        path.write_bytes(given["data"])
        return frozen.relocated(core_read(str(path), None, given["name"], given["limits"]), directory)

    return read


# Generated line structures -------------------------------------------------------------------------------


def test_line_structures_in_memory():
    assert_frozen("lines_in_memory", in_memory, 150)


def test_line_structures_on_disk(tmp_path):
    assert_frozen("lines_on_disk", on_disk_in(tmp_path), 60)


def test_gzip_in_memory():
    assert_frozen("gzip_in_memory", in_memory, 150)


def test_damaged_gzip_in_memory():
    assert_frozen("damaged_gzip_in_memory", in_memory, 100)


def test_damaged_gzip_on_disk(tmp_path):
    assert_frozen("damaged_gzip_on_disk", on_disk_in(tmp_path), 40)


def test_spool_segments():
    assert_frozen("spool_segments", in_memory, 80)


# Larger streams: inflate fed 8 KiB at a time, blocks of 1 MiB ----------------------------------------------


def _lines_of(count: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(
        b'{"n": %d, "text": "%s"}\n'
        % (n, "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(0, 300))).encode())
        for n in range(count)
    )


@functools.cache
def large() -> bytes:
    """~2 MiB of JSON Lines (made when a test asks: at import, every collection paid seconds for it)."""
    return _lines_of(12000, 1)


@functools.cache
def large_stored() -> bytes:
    """`large()` gzipped: ~1 MiB."""
    return gzip.compress(large(), compresslevel=6, mtime=0)


@pytest.mark.slow
def test_large_damaged_gzip():
    def read(given: dict):
        at = int(len(large_stored()) * given["fraction"])
        if given["damage"] == "flip":
            stored = large_stored()[:at] + bytes([large_stored()[at] ^ 0x55]) + large_stored()[at + 1 :]
        else:
            stored = large_stored()[:at]
        return core_read(None, stored, given["name"], DEFAULTS)

    assert_frozen("large_damaged", read, 20)


@pytest.mark.slow
def test_large_gzip_past_the_limit_and_a_document_past_its_limit():
    assert_frozen("large_gzip_limits", lambda given: core_read(None, large_stored(), given["name"], given["limits"]), 3)


@pytest.mark.slow
def test_large_files_on_disk_span_blocks(tmp_path):
    (tmp_path / "big").write_bytes(large())
    sse = b"".join(b": ping\r\ndata: " + line.rstrip(b"\n") + b"\r\n\r\n" for line in large().splitlines(keepends=True))
    (tmp_path / "big.sse").write_bytes(sse)
    assert_frozen(
        "large_on_disk", lambda given: core_read(str(tmp_path / given["file"]), None, given["name"], given["limits"]), 4
    )


@pytest.mark.slow
def test_highly_compressed_stream_with_a_flipped_byte():
    stored = gzip.compress((b'{"a": "' + b"z" * 5000 + b'"}\n') * 600, mtime=0)

    def read(given: dict):
        at = given["at"]
        broken = stored[:at] + bytes([stored[at] ^ 0xFF]) + stored[at + 1 :]
        return core_read(None, broken, given["name"], given["limits"])

    assert_frozen("compressed_flipped", read, 6)


def test_long_lines_stream_past_the_record_limit():
    data = b"a" * 3_000_000 + b"\n" + b'{"b": 1}\n' + b"c" * 2_500_000
    sse = b"data: " + b"d" * 2_200_000 + b"\n\n" + b"data: 1\r\rdata: 2\n"
    forms = {"lines": data, "gzip": gzip.compress(data, mtime=0), "sse": sse}
    assert_frozen("long_lines", lambda given: core_read(None, forms[given["form"]], given["name"], given["limits"]), 3)


# Files that cannot be read -----------------------------------------------------------------------------


def test_missing_file_directory_fifo_and_links(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    dangling = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", dangling)
    paths = {
        "missing": tmp_path / "missing.jsonl",
        "directory": tmp_path,
        "fifo": fifo,
        "loop": loop,
        "dangling": dangling,
        "/dev/null": Path("/dev/null"),
    }

    def read(label: str):
        path = str(paths[label])
        return frozen.relocated(core_read(path, None, path, DEFAULTS), tmp_path)

    assert_frozen("unreadable_files", read, 6)


def test_a_name_not_in_utf8(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), b"bad\xff.jsonl")
    with open(path, "wb") as handle:
        handle.write(b'{"a": 1}\n')

    def read(shown: str):
        name = shown.replace("<DIR>", str(tmp_path))
        return frozen.relocated(core_read(os.fsdecode(path), None, name, DEFAULTS), tmp_path)

    assert_frozen("name_not_utf8", read, 1)


def test_head_of_a_file_on_disk_is_its_first_read(tmp_path):
    """Python tells a file's container from its first buffered read (st_blksize bytes), not 64 KiB."""
    path = tmp_path / "spaces"

    def read(data: bytes):
        path.write_bytes(data)
        return frozen.relocated(core_read(str(path), None, str(path), DEFAULTS), tmp_path)

    assert_frozen("head_on_disk", read, 1)
    assert_frozen("head_in_memory", in_memory, 1)


def test_sources_read_elsewhere(tmp_path):
    """Unreadable paths, rows of a task store and refused files, as Python handed them over."""
    assert_frozen("unreadable_source", lambda reason: _core.read_source_of("unreadable", reason=reason), 1)
    store = tmp_path / "tasks.sqlite"
    with sqlite3.connect(store) as con:
        con.execute("CREATE TABLE tasks (id TEXT, context_id TEXT, status TEXT, artifacts BLOB)")
        con.execute("INSERT INTO tasks VALUES ('t1', 'c1', '{\"state\": \"completed\"}', x'c3a9ff')")
    con.close()
    (case,) = SNAPSHOT["store_rows"]
    container, compression, records = case["out"]
    assert container == "sqlite"
    assert len(records) == 1
    rows = [(locator, raw) for _, locator, raw, *_ in records]
    core = _core.read_source_of("rows", container=container, rows=rows)
    assert list(core[:2]) == [container, compression]
    # the core's row records hold their raw bytes where Python's held the row's value (the same bytes)
    assert frozen.text([r[:4] + r[4:6] + r[7:] for r in core[2]]) == frozen.text(
        [r[:4] + r[4:6] + r[7:] for r in records]
    )
    assert [r[6] for r in core[2]] == [r[2] for r in records]
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x01" * 200)
    (case,) = SNAPSHOT["refused_store"]
    container, _, records = frozen.value(frozen.text(case["out"]).replace("<DIR>", str(tmp_path)))
    refused = _core.read_source_of("refused", container=container, reason=records[0][7], path=os.fsencode(bad))
    assert frozen.text(frozen.relocated(refused, tmp_path)) == frozen.text(case["out"])


# Every file the tests ingest ---------------------------------------------------------------------------


@pytest.mark.slow
def test_sample_files():
    """Every sample and test-corpus file (as of the snapshot) on disk, in memory and gzip-compressed, named
    by its path from the repository's root."""

    def read(name: str):
        path = ROOT / name
        raw = path.read_bytes()
        return {
            "disk": core_read(str(path), None, name, DEFAULTS),
            "memory": core_read(None, raw, name, DEFAULTS),
            "gzip": core_read(None, gzip.compress(raw, mtime=0), name + ".gz", DEFAULTS),
        }

    cases = SNAPSHOT["samples"]
    stale = [
        case["in"]
        for case in cases
        if not (ROOT / case["in"]).is_file() or frozen.sha256_of(ROOT / case["in"]) != case["sha256"]
    ]
    assert not stale, f"changed since the snapshot (run tests/snapshots/core/make.py): {stale}"
    assert_frozen("samples", read, 40)


def test_a_first_line_with_an_integer_past_a_double_is_the_known_divergence():
    """orjson refuses an integer too large for a double ("number is infinity"); the core's `decode`, as
    `archiver.read.decode` did, reads it exactly. Python's `detect` asked for orjson's validity of a first
    line, so such a first line (in a file without a JSON Lines extension) told a JSON document to Python and
    tells JSON Lines to the core. Named in the read stage's report."""
    data = b'{"n": ' + b"9" * 400 + b'}\n{"n": 1}\n'
    python_named_x, python_named_jsonl = SNAPSHOT["divergence"]
    assert python_named_x["in"] == {"data": data, "name": "x", "limits": DEFAULTS}
    assert python_named_x["out"][0] == "json"
    assert core_read(None, data, "x", DEFAULTS)[0] == "jsonl"
    assert frozen.matches(in_memory(python_named_jsonl["in"]), python_named_jsonl)


def test_detect_agrees():
    assert_frozen("detect", lambda head: _core.detect_container(head, "x"), 7)
