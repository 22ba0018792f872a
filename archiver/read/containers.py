"""Detect a source's container by content and split it into records.

Containers: a JSON document, JSON Lines, Server-Sent-Event captures, any of
these gzip-compressed, and SQLite task stores. Records cover the decompressed
bytes contiguously (blank lines and keep-alive comments become `filler`
records), so concatenating a file's records gives its bytes back.

A table of a live task store (PostgreSQL, MySQL: see `read.stores`) arrives as a snapshot of its rows,
one serialised row a line; each row is a record located by its key.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import sqlite3
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

import orjson

from ..errors import RecordError
from .records import Record
from .segments import STREAM_SEGMENT, UNARY_SEGMENT, read_stream_segment, segment_kind

GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
BOM = b"\xef\xbb\xbf"
GZIP_LIMIT = int(os.environ.get("ARCHIVER_GZIP_LIMIT") or 8 * 1024**3)
"""Largest decompressed size accepted from one gzip file (bytes); beyond it the file is refused."""
RECORD_LIMIT = int(os.environ.get("ARCHIVER_RECORD_LIMIT") or 512 * 1024**2)
"""Largest record read (a line, or a whole JSON document), in bytes: a longer one is passed over as it
streams by, never held (a gzip bomb without newlines expands past it long before the gzip limit), and
becomes an unreadable record naming the limit."""
JSON_DOCUMENT_LIMIT = RECORD_LIMIT
LINE_CHUNK = 1 << 20
SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")
LINE_EXTENSIONS = (".jsonl", ".ndjson")
HEAD_SIZE = 64 * 1024


class ContainerError(RecordError):
    """The whole source is unreadable (corrupt gzip, an expansion past the limit, ...)."""


@dataclass(frozen=True)
class StoreTable:
    """A table of a live task store whose snapshot a source holds in `data`, one serialised row a line."""

    kind: str  # postgresql | mysql: the source's container
    table: str
    keys: tuple[str, ...]
    """The columns that name a row (the A2A SDKs' primary key columns the table has)."""


@dataclass
class SourceFile:
    path: str  # as archived: absolute, "<stdin>", or a task store's URL (no password) and table
    data: bytes | None = None  # content given in memory (stdin, a task store's snapshot)
    unreadable: str | None = None  # why the path could not be read, once `fingerprint` found it so
    location: str | None = None  # the path to open, where it differs from `path` (a name not in UTF-8)
    store: StoreTable | None = None  # for a live task store's table: what `data` holds

    @classmethod
    def on_disk(cls, path: str) -> SourceFile:
        """The file at a filesystem path. A name that is not valid UTF-8 is archived with each undecodable
        byte written as a \\xNN escape (b"bad\\xff.jsonl" as "bad\\\\xff.jsonl"); the file itself is read."""
        location = os.path.abspath(path)
        archived = shown(location)
        return cls(archived, location=None if archived == location else location)

    @property
    def fs_path(self) -> str:
        return self.location or self.path

    def open(self) -> BinaryIO:
        """The bytes on disk; OSError for a path that is not a regular file (a FIFO would block)."""
        if self.data is not None:
            return io.BytesIO(self.data)
        fd = os.open(self.fs_path, os.O_RDONLY | os.O_NONBLOCK)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise OSError(f"not a regular file ({_file_type(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")

    def fingerprint(self, prefix: int | None = None) -> tuple[str, int, str | None]:
        """SHA-256 and size of the bytes as stored on disk (compressed, if they are), and the SHA-256 of
        their first `prefix` bytes (None when asked for none, or when the file is shorter): whether the
        file extends a version stored before is known from one read.

        A path that cannot be read (vanished, a dangling symlink or a loop, not a regular file,
        no permission) is fingerprinted as empty and marked `unreadable`: it becomes one
        quarantined record naming why, and the ingest goes on.
        """
        digest, size = hashlib.sha256(), 0
        head = hashlib.sha256() if prefix is not None else None
        head_sha256 = None
        try:
            with self.open() as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
                    if head is not None and head_sha256 is None:
                        head.update(chunk[: max(0, prefix - size)])
                        if size + len(chunk) >= prefix:
                            head_sha256 = head.hexdigest()
                    size += len(chunk)
        except OSError as exc:
            self.unreadable = f"cannot read the file: {exc.strerror or exc}"
            return hashlib.sha256(b"").hexdigest(), 0, None
        if head is not None and head_sha256 is None and size >= prefix:  # prefix == 0, or an empty file
            head_sha256 = head.hexdigest()
        return digest.hexdigest(), size, head_sha256


def shown(path: str) -> str:
    """A filesystem path as text: bytes of its name that are not UTF-8 as \\xNN escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _file_type(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


class _BoundedGzip(io.RawIOBase):
    """A gzip stream that refuses to expand past GZIP_LIMIT (gzip bombs) and names corruption."""

    def __init__(self, raw: BinaryIO, limit: int) -> None:
        self._gzip = gzip.GzipFile(fileobj=raw)
        self._limit, self._total = limit, 0
        self._failure: ContainerError | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """Fill `buffer`. What decompressed before a corruption, or up to the limit, is returned
        first and the error raised on the next call: no good bytes go down with the failing read."""
        filled = 0
        while filled < len(buffer) and self._failure is None:
            try:
                data = self._gzip.read1(len(buffer) - filled)
            except (OSError, EOFError, zlib.error) as exc:
                self._failure = ContainerError(f"corrupt gzip data after {self._total} decompressed bytes: {exc}")
                break
            if not data:
                break
            if self._total + len(data) > self._limit:
                data = data[: self._limit - self._total]
                self._failure = ContainerError(
                    f"gzip expands past the limit of {self._limit} bytes (ARCHIVER_GZIP_LIMIT)"
                )
            self._total += len(data)
            buffer[filled : filled + len(data)] = data
            filled += len(data)
        if not filled and self._failure is not None:
            raise self._failure
        return filled


def open_content(source: SourceFile) -> tuple[BinaryIO, str | None]:
    """The decompressed byte stream of a source, and its compression."""
    handle = source.open()
    if handle.read(2) == GZIP_MAGIC:
        handle.seek(0)
        return io.BufferedReader(_BoundedGzip(handle, GZIP_LIMIT), 1 << 20), "gzip"
    handle.seek(0)
    return handle, None


def detect(head: bytes, name: str) -> str:
    """The container of a stream from its first bytes: sqlite, sse, jsonl, json, empty or binary."""
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    text = head.removeprefix(BOM)
    stripped = text.lstrip()
    if not stripped:
        return "empty"
    if b"\x00" in text[:4096]:
        return _lines_around_nul(text, sse=stripped.startswith(SSE_FIELDS))
    segment = segment_kind(text)
    if segment is not None:
        return segment
    if stripped.startswith(SSE_FIELDS):
        return "sse"
    lower = name.lower().removesuffix(".gz")
    if lower.endswith(LINE_EXTENSIONS):
        return "jsonl"
    first, newline, rest = stripped.partition(b"\n")
    if newline and rest.strip() and _is_json(first):
        return "jsonl"
    return "json"


def _lines_around_nul(text: bytes, sse: bool) -> str:
    """A NUL byte is never JSON, so a head holding one is a single document only if it is no document at
    all: "binary", unless a line of it (an SSE `data:` line, in a capture) is JSON: then the NUL is
    a bad record among good ones, and only its record is quarantined. Only an object or an array counts:
    a binary file may well hold a line "1"."""
    for line in text.splitlines():
        if sse:
            line = line[len(b"data:") :] if line.startswith(b"data:") else b""
        if line.strip()[:1] in (b"{", b"[") and _is_json(line):
            return "sse" if sse else "jsonl"
    return "binary"


def _is_json(text: bytes) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def read_records(source: SourceFile) -> tuple[str, str | None, Iterator[Record]]:
    """Container, compression, and a stream of the source's records."""
    if source.unreadable is not None:
        return "unreadable", None, iter([Record(0, "file", b"", "unreadable", error=source.unreadable)])
    if source.store is not None:
        return source.store.kind, None, read_store_rows(source.data or b"", source.store)
    try:
        if source.data is None and is_sqlite(source):
            return "sqlite", None, read_sqlite(source)
        stream, compression = open_content(source)
    except OSError as exc:  # gone since it was fingerprinted
        return (
            "unreadable",
            None,
            iter([Record(0, "file", b"", "unreadable", error=f"cannot read the file: {exc.strerror or exc}")]),
        )
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream, 1 << 20)
    try:
        head = stream.peek(HEAD_SIZE)[:HEAD_SIZE]
    except ContainerError as exc:
        return "unreadable", compression, _whole_unreadable(source, str(exc))
    container = detect(head, source.path)
    readers = {
        "sse": read_sse,
        "jsonl": read_lines,
        "json": read_document,
        "empty": read_lines,
        UNARY_SEGMENT: read_lines,
        STREAM_SEGMENT: read_stream_segment,
    }
    reader = readers.get(container)
    if reader is None:
        return container, compression, _whole_unreadable(source, f"not JSON, JSON Lines, SSE or SQLite ({container})")
    return container, compression, _guarded(reader(stream), source)


def is_sqlite(source: SourceFile) -> bool:
    with source.open() as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _guarded(records: Iterator[Record], source: SourceFile) -> Iterator[Record]:
    """Yield records; if the container breaks mid-way (corrupt or truncated gzip, a gzip bomb), one
    unreadable record follows, holding the whole file as stored: what could not be decompressed
    is kept in the only form it exists in."""
    seq = 0
    try:
        for record in records:
            seq = record.seq + 1
            yield record
    except ContainerError as exc:
        with source.open() as handle:
            raw = handle.read()
        yield Record(seq, f"after record {seq} (the whole file as stored)", raw, "unreadable", error=str(exc))


def _whole_unreadable(source: SourceFile, reason: str) -> Iterator[Record]:
    yield whole_file(source, reason)


def whole_file(source: SourceFile, reason: str) -> Record:
    """The file as stored (compressed, if it is) as one unreadable record: empty if it cannot be read."""
    try:
        with source.open() as handle:
            raw = handle.read()
    except OSError:
        raw = b""
    return Record(0, "file", raw, "unreadable", byte_offset=0, error=reason)


class LineTooLongError(RecordError):
    """A line past RECORD_LIMIT: `length` bytes, passed over unread."""

    def __init__(self, length: int) -> None:
        super().__init__(
            f"a line of {length} bytes, past the record limit of {RECORD_LIMIT} bytes "
            f"(ARCHIVER_RECORD_LIMIT); its bytes are not stored"
        )
        self.length = length


def _lines(stream: BinaryIO) -> Iterator[tuple[int, int, bytes | LineTooLongError]]:
    """(line number, byte offset, line with its terminator, or LineTooLongError in its place)."""
    offset, number = 0, 0
    while line := stream.readline(LINE_CHUNK):
        number += 1
        if len(line) == LINE_CHUNK and not line.endswith(b"\n"):
            line = _long_line(stream, line)
        yield number, offset, line
        offset += line.length if isinstance(line, LineTooLongError) else len(line)


def _long_line(stream: BinaryIO, start: bytes) -> bytes | LineTooLongError:
    """The rest of a line longer than a chunk, read a chunk at a time; past RECORD_LIMIT the line is
    read on to its end but let go."""
    buffer = io.BytesIO()  # grows in place, and getvalue() hands over its bytes without a copy
    buffer.write(start)
    length, chunk = len(start), start
    while chunk and not chunk.endswith(b"\n"):
        chunk = stream.readline(LINE_CHUNK)
        length += len(chunk)
        if buffer is not None and length > RECORD_LIMIT:
            buffer = None
        elif buffer is not None:
            buffer.write(chunk)
    return buffer.getvalue() if buffer is not None else LineTooLongError(length)


def read_lines(stream: BinaryIO) -> Iterator[Record]:
    """JSON Lines: one record per line; blank lines are filler."""
    seq = 0
    with stream:
        for number, offset, line in _lines(stream):
            if isinstance(line, LineTooLongError):
                yield Record(seq, f"line {number}", b"", "unreadable", line=number, byte_offset=offset, error=str(line))
                seq += 1
                continue
            body = line[len(BOM) :] if number == 1 and line.startswith(BOM) else line
            kind = "json" if body.strip() else "filler"
            yield Record(seq, f"line {number}", line, kind, line=number, byte_offset=offset, payload=body)
            seq += 1


def read_document(stream: BinaryIO) -> Iterator[Record]:
    """A whole JSON document (an object or an array) is one record."""
    with stream:
        raw = stream.read(JSON_DOCUMENT_LIMIT + 1)
    if len(raw) > JSON_DOCUMENT_LIMIT:
        yield Record(
            0,
            "document",
            raw[:0],
            "unreadable",
            line=1,
            byte_offset=0,
            error=f"a JSON document larger than {JSON_DOCUMENT_LIMIT} bytes; split it into JSON Lines",
        )
        return
    body = raw.removeprefix(BOM)
    yield Record(0, "document", raw, "json", line=1, byte_offset=0, payload=body)


def read_sse(stream: BinaryIO) -> Iterator[Record]:
    """Server-Sent Events: a record per event (its lines through the blank line that ends it).

    `data:` lines of one event are joined with "\\n"; comments, `event:`, `id:`
    and `retry:` lines are kept in the raw bytes. An event without data is filler. Lines end in
    CRLF, LF or a bare CR, as the spec allows; line numbers count them so.
    """
    seq, block, data, start_line, start_offset = 0, [], [], 1, 0
    event_number = 0

    def emit() -> Record:
        nonlocal seq, event_number
        raw = b"".join(block)
        if data:
            event_number += 1
            record = Record(
                seq,
                f"event {event_number} (line {start_line})",
                raw,
                "json",
                line=start_line,
                byte_offset=start_offset,
                payload=b"\n".join(data),
            )
        else:
            record = Record(seq, f"line {start_line}", raw, "filler", line=start_line, byte_offset=start_offset)
        seq += 1
        return record

    with stream:
        for number, offset, line in _sse_lines(stream):
            if isinstance(line, LineTooLongError):
                if block:
                    yield emit()
                    block, data = [], []
                yield Record(seq, f"line {number}", b"", "unreadable", line=number, byte_offset=offset, error=str(line))
                seq += 1
                continue
            if not block:
                start_line, start_offset = number, offset
                line_body = line[len(BOM) :] if number == 1 and line.startswith(BOM) else line
            else:
                line_body = line
            block.append(line)
            content = line_body.rstrip(b"\r\n")
            if content.startswith(b"data:"):
                value = content[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            if not content:
                yield emit()
                block, data = [], []
        if block:
            yield emit()


_SSE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
"""One SSE line and its terminator: CRLF, LF or a bare CR."""


def _sse_lines(stream: BinaryIO) -> Iterator[tuple[int, int, bytes | LineTooLongError]]:
    """(line number, byte offset, line with its terminator, or LineTooLongError in its place) as the SSE spec
    ends lines: CRLF, LF or CR.

    The stream's LF-ended lines are split at any bare CR; a CRLF never straddles two of them.
    """
    number, offset = 0, 0
    for _number, _offset, chunk in _lines(stream):
        if isinstance(chunk, LineTooLongError):
            number += 1
            yield number, offset, chunk
            offset += chunk.length
            continue
        cr = chunk.find(b"\r")
        one_line = cr == -1 or (cr == len(chunk) - 2 and chunk.endswith(b"\r\n"))
        for line in [chunk] if one_line else _SSE_LINE.findall(chunk):
            number += 1
            yield number, offset, line
            offset += len(line)


def read_sqlite(source: SourceFile) -> Iterator[Record]:
    """Rows of the A2A SDK's task store (`tasks`, or any table shaped like it)."""
    try:
        con = sqlite3.connect(f"file:{quote(os.fsencode(Path(source.fs_path).resolve()))}?mode=ro", uri=True)
        try:
            tables = _task_tables(con)
            if not tables:
                raise sqlite3.DatabaseError(f"no {TASK_TABLE_SHAPE}")
            seq = 0
            for table in tables:
                cursor = con.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid')
                names = [d[0] for d in cursor.description][1:]
                for rowid, *values in cursor:
                    row, raw = store_row(names, values)
                    yield Record(seq, f"{table} rowid {rowid}", raw, "row", value=row)
                    seq += 1
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        yield from _whole_unreadable(source, f"SQLite file is not a readable task store: {exc}")


def sqlite_rows(source: SourceFile) -> list[tuple[str, bytes]]:
    """The rows of an A2A SDK's SQLite task store (`tasks`, or any table shaped like it), each located by its
    table and rowid, as (locator, JSON text) pairs for the core; sqlite3.DatabaseError when it is none."""
    con = sqlite3.connect(f"file:{quote(os.fsencode(Path(source.fs_path).resolve()))}?mode=ro", uri=True)
    try:
        tables = _task_tables(con)
        if not tables:
            raise sqlite3.DatabaseError(f"no {TASK_TABLE_SHAPE}")
        rows = []
        for table in tables:
            cursor = con.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid')
            names = [d[0] for d in cursor.description][1:]
            rows += [(f"{table} rowid {rowid}", store_row(names, values)[1]) for rowid, *values in cursor]
        return rows
    finally:
        con.close()


TASK_TABLE_COLUMNS = frozenset({"id", "context_id", "status"})
TASK_TABLE_SHAPE = "A2A task-store table (one with id, context_id and status columns)"


def task_tables(columns: dict[str, Iterable[str]]) -> list[str]:
    """Of tables and their column names, those shaped like an A2A SDK's task table: `tasks` first, then by name."""
    shaped = sorted(name for name, names in columns.items() if set(names) >= TASK_TABLE_COLUMNS)
    return sorted(shaped, key=lambda name: name != "tasks")


def _task_tables(con: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return task_tables({name: [r[1] for r in con.execute(f'PRAGMA table_info("{name}")')] for name in names})


def store_row(names: list[str], values: Iterable) -> tuple[dict, bytes]:
    """A task-store row as a dict of JSON-ready cells, and its raw bytes: that dict serialised. One
    definition for every store, so the same row reads as the same bytes however it was fetched."""
    row = {name: _cell(value) for name, value in zip(names, values, strict=False)}
    return row, orjson.dumps(row)


def read_store_rows(data: bytes, store: StoreTable) -> Iterator[Record]:
    """The rows of a live store's table snapshot (`store_row` bytes, one a line), each located by its key;
    a key seen again (a table without a primary key) is told apart by its count."""
    seen: dict[str, int] = {}
    for seq, raw in enumerate(data.splitlines()):
        row = orjson.loads(raw)
        locator = f"{store.table} " + " ".join(f"{key}={row.get(key)}" for key in store.keys)
        seen[locator] = seen.get(locator, 0) + 1
        if seen[locator] > 1:
            locator += f" #{seen[locator]}"
        yield Record(seq, locator, raw, "row", value=row)


def store_rows(data: bytes, store: StoreTable) -> list[tuple[str, bytes]]:
    """The rows of a live store's table snapshot (`store_row` bytes, one a line) as (locator, JSON text) pairs,
    each located by its key; a key seen again (a table without a primary key) is told apart by its count."""
    seen: dict[str, int] = {}
    rows = []
    for raw in data.splitlines():
        row = orjson.loads(raw)
        locator = f"{store.table} " + " ".join(f"{key}={row.get(key)}" for key in store.keys)
        seen[locator] = seen.get(locator, 0) + 1
        if seen[locator] > 1:
            locator += f" #{seen[locator]}"
        rows.append((locator, raw))
    return rows


def _cell(value):
    """A value as a JSON cell: text as it is, bytes as UTF-8 text, a time in ISO 8601, any other
    non-JSON value (a decimal, a UUID) as its text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, (str, int, float)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
