"""Broken containers: gzip (corrupt, truncated, bombs), SSE captures cut or polluted, SQLite that is no task store."""

from __future__ import annotations

import gzip
import sqlite3
import struct
import zlib

import pytest

from tests.transcripts import rows

from .cases import assert_quarantine, event, good, ingest, quarantined_raw, stored_bytes, tasks

LINES = b"".join(good(number) + b"\n" for number in (1, 2, 3))


def test_gzip_with_a_corrupt_second_member_keeps_the_first_and_the_whole_file(archive, write):
    content = gzip.compress(LINES, mtime=0) + b"\x1f\x8bthis is no gzip header"
    path = write("two.jsonl.gz", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "after record 3 (the whole file as stored)",
                f"corrupt gzip data after {len(LINES)} decompressed bytes: Unknown compression method",
            )
        ],
    )
    assert quarantined_raw(archive, path) == [content]  # nothing ingested is lost: the bytes as they were
    assert tasks(archive, path) == ["t1", "t2", "t3"]


def test_gzip_with_a_wrong_checksum(archive, write):
    compressed = gzip.compress(LINES, mtime=0)
    wrong = zlib.crc32(LINES) ^ 1
    content = compressed[:-8] + struct.pack("<II", wrong, len(LINES))
    path = write("crc.jsonl.gz", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "after record 3 (the whole file as stored)",
                (
                    f"corrupt gzip data after {len(LINES)} decompressed bytes: CRC check failed {hex(wrong)} != "
                    f"{hex(zlib.crc32(LINES))}"
                ),
            )
        ],
    )
    assert quarantined_raw(archive, path) == [content]
    assert tasks(archive, path) == ["t1", "t2", "t3"]


def test_truncated_gzip_keeps_what_decompressed_and_the_whole_file(archive, write):
    content = gzip.compress(LINES, mtime=0)[:-8]
    path = write("cut.jsonl.gz", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "after record 3 (the whole file as stored)",
                (
                    f"corrupt gzip data after {len(LINES)} decompressed bytes: "
                    "Compressed file ended before the end-of-stream marker was reached"
                ),
            )
        ],
    )
    assert quarantined_raw(archive, path) == [content]
    assert tasks(archive, path) == ["t1", "t2", "t3"]


@pytest.mark.slow
def test_gzip_magic_with_garbage_after_it_is_quarantined_whole(archive, write):
    content = b"\x1f\x8b" + bytes(range(200))
    path = write("fake.jsonl.gz", content)
    neighbour = write("fine.jsonl", LINES)
    summary = ingest(archive, path, neighbour)
    assert_quarantine(
        archive, summary, path, [("file", "corrupt gzip data after 0 decompressed bytes: Unknown compression method")]
    )
    assert quarantined_raw(archive, path) == [content]
    assert tasks(archive, neighbour) == ["t1", "t2", "t3"]


def test_gzip_bomb_is_refused_past_the_limit(archive, write, monkeypatch):
    from archiver.read import containers

    monkeypatch.setattr(containers, "GZIP_LIMIT", 10_000)  # ingest(workers=1): the limit lives in this process
    bomb = gzip.compress(b"\n" * 1_000_000, mtime=0)
    path = write("bomb.jsonl.gz", bomb)
    neighbour = write("fine.jsonl", LINES)
    summary = ingest(archive, path, neighbour)
    assert_quarantine(
        archive,
        summary,
        path,
        [  # the blank lines up to the limit are kept as filler, the records they stood for counted
            (
                "after record 10000 (the whole file as stored)",
                ("gzip expands past the limit of 10000 bytes (ARCHIVER_GZIP_LIMIT)"),
            )
        ],
    )
    filler = "SELECT count(*), sum(octet_length(raw)) FROM records WHERE source_path = ? AND kind = 'filler'"
    assert rows(archive, filler, [path]) == [(1, 10_000)]  # one run of blank lines, one record
    assert quarantined_raw(archive, path) == [bomb]
    assert tasks(archive, neighbour) == ["t1", "t2", "t3"]


def test_gzip_bomb_after_good_records_keeps_them(archive, write, monkeypatch):
    from archiver.read import containers

    limit = len(LINES) + 1000
    monkeypatch.setattr(containers, "GZIP_LIMIT", limit)
    bomb = gzip.compress(LINES + b" " * 10_000_000, mtime=0)
    path = write("late-bomb.jsonl.gz", bomb)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "after record 3 (the whole file as stored)",
                f"gzip expands past the limit of {limit} bytes (ARCHIVER_GZIP_LIMIT)",
            )
        ],
    )
    assert quarantined_raw(archive, path) == [bomb]  # the unfinished line of spaces is in there
    assert tasks(archive, path) == ["t1", "t2", "t3"]


@pytest.mark.slow
def test_sse_capture_cut_mid_event(archive, write):
    content = event(good(1)) + event(good(2)) + b": ping\nid: 3\ndata: " + good(3)[:40]
    path = write("cut.sse", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("event 3 (line 5)", "invalid JSON: unexpected end of the text: line 1 column 41 (byte 40)")],
    )
    assert quarantined_raw(archive, path) == [b": ping\nid: 3\ndata: " + good(3)[:40]]
    assert tasks(archive, path) == ["t1", "t2"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_sse_event_of_invalid_json_between_good_ones(archive, write):
    content = event(good(1)) + b"event: message\ndata: {not json\n\n" + event(good(3))
    path = write("noise.sse", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("event 2 (line 3)", "invalid JSON: expected a string key, found 'n': line 1 column 2 (byte 1)")],
    )
    assert quarantined_raw(archive, path) == [b"event: message\ndata: {not json\n\n"]
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_sqlite_file_that_is_not_a_task_store(archive, tmp_path, write):
    path = tmp_path / "notes.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    con.execute("INSERT INTO notes VALUES (1, 'hello')")
    con.commit()
    con.close()
    neighbour = write("fine.jsonl", LINES)
    summary = ingest(archive, str(path), neighbour)
    assert_quarantine(
        archive,
        summary,
        str(path),
        [
            (
                "file",
                (
                    "SQLite file is not a readable task store: no A2A task-store table "
                    "(one with id, context_id and status columns, or task_id and task_data as the Java SDK's)"
                ),
            )
        ],
    )
    assert quarantined_raw(archive, str(path)) == [path.read_bytes()]
    assert tasks(archive, neighbour) == ["t1", "t2", "t3"]


@pytest.mark.slow
def test_sqlite_header_over_garbage(archive, write):
    content = b"SQLite format 3\x00" + b"\x00garbage" * 100
    path = write("broken.db", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive, summary, path, [("file", "SQLite file is not a readable task store: file is not a database")]
    )
    assert quarantined_raw(archive, path) == [content]
