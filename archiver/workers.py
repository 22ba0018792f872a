"""The parsing processes of an ingest: they never outlive it, and are killed rather than awaited.

Each worker is a forkserver process fed one call at a time over its own pipe by the calling thread, with no
helper threads. (`ProcessPoolExecutor` reads results on a thread of its own: when a worker is killed while
sending a result, that thread waits forever for the rest of it, and the interpreter waits for that thread
at exit.) Workers ignore the terminal's Ctrl-C (the ingest decides what a Ctrl-C means) and die with the
ingest however it ends (see `processes.die_with`). They hold the forkserver's "alive" pipe and the
resource tracker's pipe, so once they are gone those two helpers see end-of-file and exit too.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any

from .errors import ArchiverError
from .interrupts import on_hard_exit
from .processes import die_with, start_time, without_pandas


class WorkerDiedError(ArchiverError):
    """A worker process ended without answering (killed from outside, or out of memory)."""


class Gauge:
    """How far each process has read into the file it is preparing, in bytes and records: slot 0 this
    process's, then one per worker; read at any moment (from another thread too) for an ingest's progress."""

    def __init__(self, workers: int) -> None:
        self.slots = multiprocessing.get_context("forkserver").Array("q", 2 * (workers + 1), lock=False)

    def total(self) -> tuple[int, int]:
        """Bytes and records read so far of the files not yet handed over."""
        return sum(self.slots[0::2]), sum(self.slots[1::2])

    def taken(self, slot: int) -> None:
        """The file read in `slot` has been handed over (it is counted as read from now on)."""
        self.slots[2 * slot] = self.slots[2 * slot + 1] = 0

    @contextmanager
    def here(self) -> Iterator[None]:
        """While the block runs, `report_read` in this process writes slot 0."""
        global _slot
        _slot = (self.slots, 0)
        try:
            yield
        finally:
            _slot = None


_slot: tuple[Any, int] | None = None
"""Where `report_read` writes in this process: a `Gauge`'s slots and which of them, or nowhere."""


def report_read(size: int, records: int) -> None:
    """How many bytes and records of its file the preparing process has read (kept until it is `taken`)."""
    if _slot is not None:
        slots, slot = _slot
        slots[2 * slot], slots[2 * slot + 1] = size, records


class Pending:
    """The result of one call, once a worker has answered it."""

    def __init__(self, pool: WorkerPool, number: int) -> None:
        self.pool, self.number = pool, number

    def result(self):
        return self.pool.result(self.number)


class WorkerPool:
    """`workers` processes; `submit` queues a call, `Pending.result` waits for its answer."""

    def __init__(self, workers: int, gauge: Gauge | None = None) -> None:
        context = multiprocessing.get_context("forkserver")
        me = (os.getpid(), start_time(os.getpid()))
        self.processes, self.idle = [], []
        self.gauge, self.slot_of = gauge, {}
        for number in range(workers):
            ours, theirs = context.Pipe()
            slot = (gauge.slots, number + 1) if gauge is not None else None
            process = context.Process(target=_serve, args=(theirs, *me, slot), daemon=True, name="archiver-worker")
            process.start()
            theirs.close()
            self.processes.append(process)
            self.idle.append(ours)
            self.slot_of[ours] = number + 1
        self.queued: deque[tuple[int, Callable, tuple]] = deque()
        self.busy: dict[Connection, int] = {}
        self.answers: dict[int, tuple[bool, object]] = {}
        self.submitted = 0
        self.answered_by: dict[int, Connection] = {}

    def submit(self, func: Callable, *args) -> Pending:
        self.queued.append((self.submitted, func, args))
        self.submitted += 1
        self._dispatch()
        return Pending(self, self.submitted - 1)

    def result(self, number: int):
        while number not in self.answers:
            for connection in wait(list(self.busy)):
                self._receive(connection)
            self._dispatch()
        ok, value = self.answers.pop(number)
        connection = self.answered_by.pop(number)
        if self.gauge is not None and connection in self.idle:  # not yet reading the next file
            self.gauge.taken(self.slot_of[connection])
        if not ok:
            raise value
        return value

    def _dispatch(self) -> None:
        while self.queued and self.idle:
            connection = self.idle.pop()
            number, func, args = self.queued.popleft()
            connection.send((func, args))
            self.busy[connection] = number
            self.answered_by[number] = connection

    def _receive(self, connection: Connection) -> None:
        number = self.busy.pop(connection)
        try:
            self.answers[number] = connection.recv()
        except EOFError:
            died = [p.exitcode for p in self.processes if not p.is_alive()]
            raise WorkerDiedError(f"a parsing worker ended without answering (exit codes {died})") from None
        self.idle.append(connection)

    def close(self) -> None:
        """Let idle workers finish; the ones still busy are killed."""
        for connection in self.idle:
            connection.send(None)
        for process in self.processes:
            process.join(timeout=5)
        self.kill()

    def kill(self) -> None:
        """SIGKILL every worker and reap it: what they were preparing is lost anyway."""
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process in self.processes:
            process.join(timeout=1)
        for connection in self.idle + list(self.busy):
            connection.close()
        self.idle, self.busy = [], {}


def _serve(connection: Connection, parent: int, started: str | None, slot: tuple[Any, int] | None = None) -> None:
    global _slot
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent, started)
    without_pandas()  # a worker hands back Arrow tables, never a pandas object
    _slot = slot
    while (call := _next_call(connection)) is not None:
        func, args = call
        try:
            answer = (True, func(*args))
        except Exception as exc:
            answer = (False, exc)
        try:
            connection.send(answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            connection.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _next_call(connection: Connection) -> tuple | None:
    """The next call; None when told to stop, or when the ingest is gone (its end of the pipe closed)."""
    try:
        return connection.recv()
    except EOFError:
        return None


@contextmanager
def worker_pool(workers: int, gauge: Gauge | None = None) -> Iterator[WorkerPool]:
    """A pool of `workers` processes (each reporting how far it has read into `gauge`); leaving the block by
    an exception (Ctrl-C included) kills them."""
    pool = WorkerPool(workers, gauge)
    with on_hard_exit(pool.kill):
        try:
            yield pool
        except BaseException:
            pool.kill()
            raise
    pool.close()
