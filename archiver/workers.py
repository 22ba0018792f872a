"""The preparing threads of an ingest: the core reads, understands and indexes files with the GIL released,
so threads prepare files beside the writer with nothing pickled and no process to start or reap.

Measured against the forkserver process pool they replaced (issue 25, docs/performance.md): 5 to 25% less
wall time on the benchmark corpora, and on 1,000 records of 1 MB, 50 s against 63 s and 534 MiB against
680 MiB (the processes pickled every batch to the writer). A thread cannot be killed: on an error or a
Ctrl-C the pool is told to stop, and each thread stops at its next batch (`stop_if_cancelled`, a few
hundred milliseconds at most).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress

from .errors import ArchiverError


class CancelledError(ArchiverError):
    """A file's preparing stopped because the ingest is stopping."""


class Gauge:
    """How far each preparing thread has read into the file it is preparing, in bytes and records: slot 0
    the calling thread's, then one per worker; read at any moment (from another thread too) for an
    ingest's progress."""

    def __init__(self, workers: int) -> None:
        self.slots = [0] * (2 * (workers + 1))

    def total(self) -> tuple[int, int]:
        """Bytes and records read so far of the files not yet handed over."""
        return sum(self.slots[0::2]), sum(self.slots[1::2])

    def taken(self, slot: int) -> None:
        """The file read in `slot` has been handed over (it is counted as read from now on)."""
        self.slots[2 * slot] = self.slots[2 * slot + 1] = 0

    @contextmanager
    def here(self) -> Iterator[None]:
        """While the block runs, what this thread reads is reported in slot 0 (`read_reporter`)."""
        _local.slot = (self, 0)
        try:
            yield
        finally:
            _local.slot = None


_local = threading.local()
"""Per thread: `slot`, where what it reads is reported (a `Gauge` and which of its slots), or None."""

_stopping = threading.Event()


def read_reporter() -> Callable[[int, int], None]:
    """A function, to be called from any thread, saying how many bytes and records of its file the calling
    preparing thread has read (kept in its slot of the gauge until the file is `taken`)."""
    where = getattr(_local, "slot", None)

    def report(size: int, records: int) -> None:
        if where is not None:
            gauge, slot = where
            gauge.slots[2 * slot], gauge.slots[2 * slot + 1] = size, records

    return report


def stop_if_cancelled() -> None:
    """Raise `CancelledError` in a preparing thread once its pool is being stopped (checked between batches)."""
    if _stopping.is_set() and getattr(_local, "worker", False):
        raise CancelledError("the ingest is stopping")


class WorkerPool:
    """`workers` preparing threads; `submit` queues a call and returns its future."""

    def __init__(self, workers: int, gauge: Gauge | None = None) -> None:
        self.gauge = gauge or Gauge(workers)
        self.free = list(range(workers, 0, -1))
        self.lock = threading.Lock()
        _stopping.clear()
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix=THREAD_NAME, initializer=self._enter)

    def _enter(self) -> None:
        with self.lock:
            slot = self.free.pop()
        _local.slot, _local.worker = (self.gauge, slot), True
        _name_thread(THREAD_NAME)

    def submit(self, func: Callable, *args) -> Future:
        return self.executor.submit(_reported, func, args)

    def close(self) -> None:
        self.executor.shutdown(wait=True)

    def stop(self) -> None:
        """Drop the calls not started; the ones in flight stop at their next batch."""
        _stopping.set()
        try:
            self.executor.shutdown(wait=True, cancel_futures=True)
        finally:
            _stopping.clear()


THREAD_NAME = "archiver-prepare"
"""What `top -H` and /proc/PID/task/*/comm call a preparing thread (the kernel keeps 15 bytes of it)."""


def _name_thread(name: str) -> None:
    with suppress(OSError, AttributeError):  # not Linux: the thread keeps its name
        ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)


PR_SET_NAME = 15


def _reported(func: Callable, args: tuple):
    """`func(*args)` in a preparing thread; its slot of the gauge emptied after (the file is read)."""
    try:
        return func(*args)
    finally:
        gauge, slot = _local.slot
        gauge.taken(slot)


@contextmanager
def worker_pool(workers: int, gauge: Gauge | None = None) -> Iterator[WorkerPool]:
    """A pool of `workers` preparing threads (each reporting how far it has read into `gauge`); leaving the
    block by an exception (Ctrl-C included) stops them."""
    pool = WorkerPool(workers, gauge)
    try:
        yield pool
    except BaseException:
        pool.stop()
        raise
    pool.close()
