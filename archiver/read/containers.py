"""Sources as Python finds them: a file on disk (or bytes given on stdin), named and fingerprinted, and the
rows of a SQLite task store or of a live store's table snapshot.

What a source's bytes hold is read by the core (`archiver/core/src/read/`): it tells the container by
content (a JSON document, JSON Lines, Server-Sent-Event captures, spool segments, any of these
gzip-compressed) and cuts it into records that cover the decompressed bytes contiguously. SQLite files and
live stores (`read.stores`) are read here; the core is handed their rows' JSON, each row a record located
by its table and key.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sqlite3
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

import orjson

SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_LIMIT = int(os.environ.get("ARCHIVER_GZIP_LIMIT") or 8 * 1024**3)
"""Largest decompressed size accepted from one gzip file (bytes); beyond it the file is refused."""
GZIP_RATIO = int(os.environ.get("ARCHIVER_GZIP_RATIO") or 200)
"""How many times its compressed size a gzip file may expand to once past 16 MiB of output (the core's
`RATIO_FLOOR`); beyond it the file is refused as it streams (a 1 MB member can hold 1 GiB of newlines)."""
RECORD_LIMIT = int(os.environ.get("ARCHIVER_RECORD_LIMIT") or 512 * 1024**2)
"""Largest record read (a line, an SSE event's line, or a whole JSON document), in bytes: the core passes a
longer one over as it streams by, never held (a gzip bomb without newlines expands past it long before the
gzip limit), and makes it an unreadable record naming the limit. Read when a file is prepared."""


@dataclass(frozen=True)
class StoreTable:
    """A table of a live task store whose snapshot a source holds in `data`, one serialised row a line."""

    kind: str  # postgresql | mysql: the source's container
    table: str
    keys: tuple[str, ...]
    """The columns that name a row (the A2A SDKs' primary key columns the table has)."""
    undecodable: tuple[tuple[int, str], ...] = ()
    """The rows (by their place in `data`) that held text not in UTF-8, and why: each is quarantined."""


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
    """A filesystem path as text: bytes of its name that are not UTF-8 as \\xNN escapes, and a backslash that
    would read as such an escape (one before `x5c` or `x80` to `xff`) as `\\x5c`, so that `on_disk` gives
    the name back byte for byte."""
    text = os.fsencode(path).decode("utf-8", "surrogateescape")
    return _SHOWN.sub(lambda found: "\\x5c" if found.group() == "\\" else f"\\x{ord(found.group()) - 0xDC00:02x}", text)


def on_disk(archived: str) -> str:
    """The filesystem path (as Python names one: `os.fsdecode` of its bytes) that `shown` archived as
    `archived`; a path with no escape in it is itself."""
    if "\\x" not in archived:
        return archived
    return os.fsdecode(_ESCAPE.sub(lambda found: bytes([int(found.group(1), 16)]), archived.encode("utf-8")))


_SHOWN = re.compile("[\udc80-\udcff]|\\\\(?=x(?:5c|[89a-f][0-9a-f]))")
_ESCAPE = re.compile(rb"\\x(5c|[89a-f][0-9a-f])")


def _file_type(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def is_sqlite(source: SourceFile) -> bool:
    with source.open() as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


Row = tuple[str, bytes, str | None]
"""A task-store row for the core: its locator, its JSON text, and why it cannot be read (None if it can)."""


def sqlite_rows(source: SourceFile) -> list[Row]:
    """The rows of an A2A SDK's SQLite task store (`tasks`, or any table shaped like it), each located by its
    table and rowid, for the core; sqlite3.DatabaseError when it is none. A row holding text that is not
    UTF-8 is quarantined, the others kept."""
    con = sqlite3.connect(f"file:{quote(os.fsencode(Path(source.fs_path).resolve()))}?mode=ro", uri=True)
    con.text_factory = text_cell
    try:
        tables = _task_tables(con)
        if not tables:
            raise sqlite3.DatabaseError(f"no {TASK_TABLE_SHAPE}")
        rows = []
        for table in tables:
            cursor = con.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid')
            names = [d[0] for d in cursor.description][1:]
            for rowid, *values in cursor:
                rows.append((f"{table} rowid {rowid}", store_row(names, values)[1], undecodable(names, values)))
        return rows
    finally:
        con.close()


class Undecodable(bytes):
    """Text a store holds that is not UTF-8, as its bytes; `at`: where its first byte that is not stands."""

    at: int


def text_cell(raw: bytes) -> str | Undecodable:
    """A text cell as a store's driver hands it over in bytes: decoded, or kept as `Undecodable`."""
    try:
        return raw.decode()
    except UnicodeDecodeError as error:
        cell = Undecodable(raw)
        cell.at = error.start
        return cell


def undecodable(names: list[str], values: Iterable) -> str | None:
    """Why a row cannot be read, if a text cell of it is not UTF-8 (its first such cell)."""
    for name, value in zip(names, values, strict=False):
        if isinstance(value, Undecodable):
            return (
                f"column {name!r} is not UTF-8 text (byte 0x{value[value.at]:02x} at {value.at}); "
                "the row is stored with each such byte as a \\xNN escape"
            )
    return None


TASK_TABLE_COLUMNS = frozenset({"id", "context_id", "status"})
WHOLE_TASK_COLUMNS = frozenset({"task_id", "task_data"})
"""The Java SDK's JPA store (`a2a_tasks`): each task's JSON in one column."""
TASK_TABLE_SHAPE = (
    "A2A task-store table (one with id, context_id and status columns, or task_id and task_data as the Java SDK's)"
)


def task_tables(columns: dict[str, Iterable[str]]) -> list[str]:
    """Of tables and their column names, those shaped like an A2A SDK's task table: `tasks` first, then by name."""
    shaped = sorted(
        name for name, names in columns.items() if set(names) >= TASK_TABLE_COLUMNS or set(names) >= WHOLE_TASK_COLUMNS
    )
    return sorted(shaped, key=lambda name: name != "tasks")


def _task_tables(con: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return task_tables({name: [r[1] for r in con.execute(f'PRAGMA table_info("{name}")')] for name in names})


def store_row(names: list[str], values: Iterable) -> tuple[dict, bytes]:
    """A task-store row as a dict of JSON-ready cells, and its raw bytes: that dict serialised. One
    definition for every store, so the same row reads as the same bytes however it was fetched."""
    row = {name: _cell(value) for name, value in zip(names, values, strict=False)}
    return row, orjson.dumps(row)


def store_rows(data: bytes, store: StoreTable) -> list[Row]:
    """The rows of a live store's table snapshot (`store_row` bytes, one a line) for the core, each located by
    its key; a key seen again (a table without a primary key) is told apart by its count."""
    seen: dict[str, int] = {}
    rows = []
    why = dict(store.undecodable)
    for place, raw in enumerate(data.splitlines()):
        row = orjson.loads(raw)
        locator = f"{store.table} " + " ".join(f"{key}={row.get(key)}" for key in store.keys)
        seen[locator] = seen.get(locator, 0) + 1
        if seen[locator] > 1:
            locator += f" #{seen[locator]}"
        rows.append((locator, raw, why.get(place)))
    return rows


def _cell(value):
    """A value as a JSON cell: text as it is, bytes as UTF-8 text, a time in ISO 8601, any other
    non-JSON value (a decimal, a UUID) as its text."""
    if isinstance(value, Undecodable):
        return value.decode("utf-8", errors="backslashreplace")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, (str, int, float)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
