"""The one spool follower: `archiver record --spool DIR`'s closed segments into an archive, as `archiver
ingest --follow` looks at the spool and as `archiver record --db` hands it each segment it closes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..defaults import FOLLOW_INTERVAL_SECONDS
from ..errors import InputError
from ..interrupts import Interrupted, stop_if_received
from ..read.containers import shown
from ..store.connection import ArchiveBusyError
from .paths import walk
from .summary import IngestSummary

FOLLOW_INTERVAL = FOLLOW_INTERVAL_SECONDS
"""Seconds between two looks at a followed spool directory."""

WAIT_ON: tuple[type[Exception], ...] = (ArchiveBusyError,)
"""The errors that mean "the archive cannot be written now" (readers, or another writer, hold it): a
follower's segments wait for its next try. Any other error stops it, said once (an archive of a newer
archiver, a path that cannot be written), rather than being tried again for ever."""


class Follower:
    """The one spool follower (`archiver record --spool DIR`'s closed segments into an archive), driven by
    `follow` looking at the spool every few seconds (`archiver ingest --follow`) and by the proxy telling it
    of each segment it closes (`archiver record --db`): it finds segments as `ingest` walks a folder (no
    `*.open` segment, nothing `.archiverignore` names), and stores them or lets them wait (`step`)."""

    def __init__(
        self,
        store: Callable[[list[str]], IngestSummary],
        on_pass: Callable[[IngestSummary], None] | None = None,
        on_wait: Callable[[Exception], None] | None = None,
    ) -> None:
        self.store, self.on_pass, self.on_wait = store, on_pass, on_wait
        self.total = IngestSummary()
        self.seen: dict[str, tuple[int, int] | tuple[()]] = {}

    def fresh(self, directory: str) -> list[str]:
        """The closed segments of `directory` not stored before, or changed since (by size and modification
        time), in name order."""
        paths = [source.fs_path for source in walk(directory)]
        return [path for path in paths if self.seen.get(path, ()) != _mark(path)]

    def step(self, paths: list[str]) -> bool:
        """Store `paths`, or let them wait: True when they were stored (each file committed whole); False when
        the archive could not be written now (`WAIT_ON`: `on_wait` hears why; without it, it is raised)."""
        marks = {path: _mark(path) for path in paths}
        try:
            summary = self.store(paths)
        except WAIT_ON as busy:
            if self.on_wait is None:
                raise
            self.on_wait(busy)
            return False
        except Interrupted as stopped:
            if self.total.files:
                stopped.progress = f"{self.total.committed('while following')}; then {stopped.progress}"
            raise
        self.seen.update(marks)
        self.total.add(summary)
        if self.on_pass is not None:
            self.on_pass(summary)
        return True

    def pause(self, seconds: float) -> None:
        """Wait for the next pass; a signal meanwhile ends the follow, saying what it stored."""
        try:
            time.sleep(seconds)
            stop_if_received()
        except Interrupted as stopped:
            stopped.progress = self.total.committed("while following")
            raise


def _mark(path: str) -> tuple[int, int] | tuple[()]:
    """A file's size and modification time; () when it is gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return (stat.st_size, stat.st_mtime_ns)


def follow(
    directory: str,
    store: Callable[[list[str]], IngestSummary],
    interval: float | None = None,
    on_pass: Callable[[IngestSummary], None] | None = None,
    until: Callable[[], bool] | None = None,
    on_busy: Callable[[Exception], None] | None = None,
) -> IngestSummary:
    """Ingest the closed segments of a spool directory (`archiver record --spool DIR`) as they appear, until
    interrupted (SIGINT or SIGTERM, raised as `Interrupted` between commits) or `until()` is true after a
    pass; the summary of everything it stored.

    Every `interval` seconds (default `FOLLOW_INTERVAL`) the `Follower` looks at the directory; the files not
    seen in an earlier pass, or changed since, are handed to `store` (an ingest into the archive: each file
    committed whole), and `on_pass` hears the pass's summary. A closed segment is immutable, so a file stored
    once is not read again; a file that was stored before this run began is recognised by its bytes
    (unchanged) and skipped. When `store` finds the archive busy (`WAIT_ON`: readers hold a file archive),
    `on_busy` hears it and the files wait for the next pass.
    """
    if not os.path.isdir(directory):
        why = "not a spool directory" if os.path.exists(directory) else "no such directory"
        raise InputError(f"{shown(directory)}: {why}")
    follower = Follower(store, on_pass, on_busy)
    interval = FOLLOW_INTERVAL if interval is None else interval
    while True:
        fresh = follower.fresh(directory)
        if fresh:
            follower.step(fresh)
        if until is not None and until():
            return follower.total
        follower.pause(interval)
