"""Bounds on the statements `archiver sql` runs: DuckDB's memory, what it may spill to disk, how long a
statement may run, and a Ctrl-C (or SIGTERM) that stops it.

DuckDB checks for no signal while it runs a query (`SELECT count(*) FROM range(1000000000000)` ran past two
SIGINTs), and its memory limit is the machine's by default. So within `Limits.applied`:

- DuckDB's buffer pool is held to `max_memory` (`memory_limit`, for the whole process's DuckDB), and what
  does not fit spills to a folder of this process under the system's temporary folder (the archive's own
  folder may be read-only), at most `SPILL_TIMES` the memory bound: a query past both ends in one line;
- a watcher thread interrupts the block's running queries (`interrupt()` of the cursors they run on) when
  `timeout` seconds have passed since the block began, or at once when SIGINT or SIGTERM arrives: Python
  writes each signal's number to a socket the watcher waits on (`signal.set_wakeup_fd`) even while the main
  thread is inside DuckDB; the statement then raises `interrupts.Interrupted` (the command ends with 130 or
  143), and a second signal ends the process at once.

A single value DuckDB builds outside its buffer pool (`repeat('x', 3000000000)`, 3 GB) is not held by the
memory bound; the timeout still ends it.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb

from ..errors import QueryError
from ..interrupts import SIGNALS, Interrupted
from ..store import views
from ..store.connection import bounded_memory

MAX_MEMORY = 2 * 1024**3
"""DuckDB's buffer pool for a statement of `archiver sql` (bytes), unless --max-memory says otherwise."""
LISTING_MEMORY = 1024**3
"""DuckDB's buffer pool while `archiver query` writes its rows (bytes): a sort of millions of wide rows spills
past it (at 100M claims the busiest column's 2.2M rows as JSON peaked at 6.0 GiB unbounded)."""
TIMEOUT = 60.0
"""Seconds a statement of `archiver sql` may run (reading its rows included), unless --timeout says otherwise."""
SPILL_TIMES = 4
"""What DuckDB may spill to disk, as a multiple of the memory bound (8 GiB for the default 2 GiB)."""


class QueryTimeoutError(QueryError):
    """A statement that ran longer than its timeout, stopped."""


@dataclass
class Limits:
    """The bounds of `archiver sql`: `max_memory` bytes of DuckDB's memory, `timeout` seconds (None: none)."""

    max_memory: int = MAX_MEMORY
    timeout: float | None = TIMEOUT
    _cursors: list[duckdb.DuckDBPyConnection] = field(default_factory=list, repr=False)
    _stopped: str | None = field(default=None, repr=False)
    _signal: int | None = field(default=None, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def cursor(self, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
        """A cursor of `con` whose queries the watcher stops (at once, if it stopped the block already)."""
        cursor = views.cursor(con)
        with self._lock:
            self._cursors.append(cursor)
            if self._stopped:
                cursor.interrupt()
        return cursor

    @contextmanager
    def applied(self, con: duckdb.DuckDBPyConnection) -> Iterator[Limits]:
        """Hold the queries run on cursors of `self.cursor` inside the block to these bounds. A statement
        stopped by the timeout raises `QueryTimeoutError`; one stopped by a signal, `Interrupted`."""
        bounds = bounded_memory(con, self.max_memory, self.max_memory * SPILL_TIMES)
        with bounds, self._signals_noted(), self._watched():
            try:
                yield self
            except (duckdb.Error, QueryError) as exc:
                raise self._why(exc) from None

    def _why(self, exc: Exception) -> BaseException:
        """What stopped a statement: a signal, the timeout, the memory bound; else `exc` itself."""
        cause = exc if isinstance(exc, duckdb.Error) else exc.__cause__
        if self._signal:
            return Interrupted(self._signal)
        if self._stopped == "timeout" and isinstance(cause, duckdb.InterruptException):
            return QueryTimeoutError(
                f"the statement ran longer than {self.timeout:g} s and was stopped: narrow it, or give a "
                "larger --timeout"
            )
        if isinstance(cause, duckdb.OutOfMemoryException):
            return QueryError(
                f"the statement needs more than {_size(self.max_memory)} of memory and "
                f"{_size(self.max_memory * SPILL_TIMES)} on disk: narrow it, or give a larger --max-memory"
            )
        return exc

    def _stop(self, why: str) -> None:
        with self._lock:
            self._stopped = self._stopped or why
            for cursor in self._cursors:
                cursor.interrupt()

    @contextmanager
    def _signals_noted(self) -> Iterator[None]:
        """SIGINT and SIGTERM noted, not raised: a handler that raises inside DuckDB (which runs Python's
        handlers between its tasks) leaves the query running in DuckDB's threads. The watcher stops it; a
        second signal ends the process at once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        before = {signum: signal.signal(signum, self._note) for signum in SIGNALS}
        try:
            yield
        finally:
            for signum, handler in before.items():
                signal.signal(signum, handler)
        if self._signal:
            raise Interrupted(self._signal)

    def _note(self, signum: int, _frame) -> None:
        if self._signal:
            os._exit(128 + self._signal)
        self._signal = signum
        self._stop("signal")

    @contextmanager
    def _watched(self) -> Iterator[None]:
        """A thread that stops the block's queries at its deadline or on a signal, while the block runs."""
        wake, woken = socket.socketpair()
        wake.setblocking(False)
        try:
            before = signal.set_wakeup_fd(wake.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main thread: no signal reaches this block
            before = None
        done, finished = socket.socketpair()
        deadline = time.monotonic() + self.timeout if self.timeout else None
        watcher = threading.Thread(target=self._watch, args=(woken, finished, deadline), daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.send(b".")
            watcher.join()
            if before is not None:
                signal.set_wakeup_fd(before)
            for end in (wake, woken, done, finished):
                end.close()

    def _watch(self, woken: socket.socket, finished: socket.socket, deadline: float | None) -> None:
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([woken, finished], [], [], left)
            if finished in ready:
                return
            if woken in ready:
                woken.recv(64)
                self._stop("signal")
            elif not ready:
                self._stop("timeout")
                deadline = None


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= scale:
            return f"{count / scale:g} {unit}"
    return f"{count} bytes"
