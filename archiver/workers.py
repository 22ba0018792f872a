"""The parsing processes of an ingest: they never outlive it, and are killed rather than awaited.

Workers are forked by a forkserver and hold its "alive" pipe and the resource tracker's pipe, which is
why, when the workers die, those two helpers see end-of-file and exit by themselves. So it is enough
that each worker dies with the ingest (a parent-death signal and a thread watching the ingest's pid and
start time), ignores the terminal's Ctrl-C (the ingest decides what a Ctrl-C means), and that an ingest
that stops early kills its workers instead of waiting for the files they are preparing.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from .interrupts import on_hard_exit
from .processes import die_with, start_time


def _start_worker(parent: int, started: str | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(parent, started)


@contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` forkserver processes; leaving the block by an exception (Ctrl-C included) kills them."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"),
                               initializer=_start_worker, initargs=(os.getpid(), start_time(os.getpid())))
    with on_hard_exit(lambda: _kill(pool)):
        try:
            yield pool
        except BaseException:
            _kill(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    pool.shutdown()


def _kill(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every worker and reap it: what they were preparing is lost anyway."""
    processes = list((pool._processes or {}).values())  # the executor offers no public way to stop its workers
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=1)
