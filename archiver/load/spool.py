"""The Arrow batches one source file contributes, handed from the worker that prepared them to the writer.

A small file's batches travel in memory (pickled back from the worker, as before). Past
`MEMORY_BYTES` they go to a temporary file instead, one Arrow IPC stream per batch, so neither the
worker nor the writer ever holds more than one batch of a large file: memory stays bounded by the
largest batch, not by the file. The batches can be read any number of times (a failed transaction
is written again) until `discard` deletes the file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

import pyarrow as pa

from ..processes import alive, start_time

MEMORY_BYTES = 16 * 2**20
"""Batches a spool keeps in memory before it moves them to a temporary file."""

COMPRESSED = pa.ipc.IpcWriteOptions(compression="lz4")
COMPRESS_BYTES = 64 * 2**20
"""Batches up to this size are written LZ4-compressed (a 2 GB file's rows took 8.5 GB of disk
uncompressed); a larger one, a huge record's, is written as it is, without a compressed copy in memory."""


PREFIX, SUFFIX = "archiver-spool.", ".arrows"


def _prefix() -> str:
    """The spool files' name start: the process that makes them and its start time, so that a later
    ingest can tell the files of a process that died (SIGKILL leaves them) from those of a live one."""
    started = (start_time(os.getpid()) or "").replace(":", "_").replace(".", "_")
    return f"{PREFIX}{os.getpid()}.{started}."


def sweep() -> int:
    """Remove the spool files that processes which died left in the temporary folder; how many."""
    removed = 0
    folder = tempfile.gettempdir()
    for name in os.listdir(folder):
        if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
            continue
        pid, _, started = name[len(PREFIX) :].partition(".")
        started = started.partition(".")[0].replace("_", ":") or None
        if pid.isdigit() and not alive(int(pid), started):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
                removed += 1
    return removed


class Spool:
    """(table name, Arrow table) pairs in the order they were added; iterable again and again. The batches
    of several small files prepared together are shared by them (`files`), each row naming its file."""

    def __init__(self) -> None:
        self.files = self._users = 1
        """How many files' rows the batches hold (`share`)."""
        self.held: list[tuple[str, pa.Table]] = []
        self.path: str | None = None
        self.index: list[tuple[str, int, int]] = []  # table name, offset, length in the file
        self.largest = 0
        """Bytes of the largest batch: what the writer must be able to hold at once."""
        self._held_bytes = 0

    def add(self, name: str, table: pa.Table) -> None:
        self.largest = max(self.largest, table.nbytes)
        if self.path is None and self._held_bytes + table.nbytes <= MEMORY_BYTES:
            self.held.append((name, table))
            self._held_bytes += table.nbytes
            return
        if self.path is None:
            fd, self.path = tempfile.mkstemp(prefix=_prefix(), suffix=SUFFIX)
            os.close(fd)
        held, self.held, self._held_bytes = [*self.held, (name, table)], [], 0
        with pa.OSFile(self.path, "ab") as sink:  # Arrow's own file: a huge buffer is written, not copied
            for held_name, held_table in held:
                start = sink.tell()
                options = COMPRESSED if held_table.nbytes <= COMPRESS_BYTES else None
                with pa.ipc.new_stream(sink, held_table.schema, options=options) as stream:
                    stream.write_table(held_table)
                self.index.append((held_name, start, sink.tell() - start))

    def share(self, files: int) -> None:
        """The batches hold the rows of `files` files, each done with them in its own time (`discard`)."""
        self.files = self._users = files

    def __iter__(self) -> Iterator[tuple[str, pa.Table]]:
        if self.path is None:
            yield from self.held
            return
        with open(self.path, "rb") as source:
            for name, start, length in self.index:
                source.seek(start)
                yield name, pa.ipc.open_stream(source.read(length)).read_all()

    def discard(self) -> None:
        """Delete the temporary file, if there is one, once every file sharing the batches is done with them
        (the writer has committed or given up the file)."""
        self._users -= 1
        if self._users > 0:
            return
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self.path, self.index = None, []
        self.held, self._held_bytes = [], 0
