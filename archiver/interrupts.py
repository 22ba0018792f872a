"""SIGINT and SIGTERM stop a run cleanly the first time and at once the second time.

The first signal raises `Interrupted` in the main thread wherever it is, so the code in flight unwinds
through its own cleanup: the open transaction rolls back, lake leases are released, parsing workers are
killed. DuckDB turns a signal that arrives during a query into an error of its own ("Query interrupted"), or
lets the statement complete, so what is raised is judged by `received()`, not by its type, and the run
also calls `stop_if_received()` between its steps. A second signal, while that cleanup runs,
ends the process at once: the archive stays consistent (an uncommitted transaction is never replayed) and
whatever the cleanup had not done yet is what a kill leaves, which the next run repairs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A run stopped by a signal. Not an `Exception`, so that no `except Exception` carries on after it."""

    def __init__(self, signum: int, progress: str = "") -> None:
        super().__init__(signum, progress)
        self.signum = signum
        self.progress = progress

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended (130, 143)."""
        return 128 + self.signum

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        return f"interrupted by {name}" + (f": {self.progress}" if self.progress else "")


_received: list[int] = []


def received() -> int | None:
    """The signal that interrupted this run, if one did."""
    return _received[0] if _received else None


def stop_if_received() -> None:
    """Raise `Interrupted` if a signal came: DuckDB may swallow the one raised in its handler (a signal
    during an Arrow scan ends in a completed statement), so the run looks again at its safe points."""
    if _received:
        raise Interrupted(_received[0])


def as_interrupted(exc: BaseException) -> BaseException:
    """`exc` as an `Interrupted` when a signal caused it (whatever DuckDB made of it), else `exc` itself."""
    if isinstance(exc, Interrupted) or received() is None:
        return exc
    return Interrupted(received())


def as_stopped_query(exc: BaseException) -> Interrupted | None:
    """A Ctrl-C as DuckDB reports it when Python's own SIGINT handler is in place (it stops the query and
    raises this RuntimeError); None for any other error. (With a handler of ours, DuckDB does not stop the
    query's threads, so commands other than ingest keep Python's.)"""
    if isinstance(exc, KeyboardInterrupt) or (isinstance(exc, RuntimeError) and str(exc) == "Query interrupted"):
        return Interrupted(signal.SIGINT)
    return None


def _handle(signum: int, _frame) -> None:
    if _received:
        os._exit(128 + _received[0])
    _received.append(signum)
    raise Interrupted(signum)


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Within this block (in the main thread), SIGINT and SIGTERM raise `Interrupted`; a second one exits."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.signal(signum, _handle) for signum in SIGNALS}
    _received.clear()
    try:
        yield
    finally:
        if not _received:  # once interrupted, a second signal still exits at once, even while Python exits
            for signum, handler in before.items():
                signal.signal(signum, handler)
