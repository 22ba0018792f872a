"""The proxy's own ingest of its closed segments into an archive (`archiver record --db`): one thread, off
the event loop, pushing each segment the proxy closes to the one spool follower (`ingest.Follower`, which
`archiver ingest --follow` drives by looking at the spool). While the archive is busy the segments wait and
are tried again; any other error stops this ingest, said once: the proxy goes on recording, and the
segments stay in the spool for `archiver ingest`."""

from __future__ import annotations

import logging
import threading
from collections import deque
from pathlib import Path

import duckdb

from ..errors import ArchiverError
from ..ingest import Follower
from .metrics import RecordMetrics

RETRY_SECONDS = 2.0


class SegmentIngest:
    """Ingests each closed segment it is told of (`closed`), in order, into the archive `db`."""

    def __init__(self, db: str, metrics: RecordMetrics, wait: float = 1.0, retry: float = RETRY_SECONDS) -> None:
        self.db, self.metrics, self.wait, self.retry = db, metrics, wait, retry
        self.pending: deque[str] = deque()
        self.follower = Follower(self._store, on_wait=self._waits)
        self.wake = threading.Event()
        self.stopping = False
        self.failed: Exception | None = None
        self.thread = threading.Thread(target=self._run, name="archiver-record-ingest", daemon=True)

    def start(self, spool: Path) -> None:
        """Start, with the spool's closed segments already there, found as `archiver ingest` walks the spool
        (an ingest skips those it stored before)."""
        self.pending.extend(self.follower.fresh(str(spool)))
        self.thread.start()

    def closed(self, path: Path) -> None:
        self.pending.append(str(path))
        self.wake.set()

    def stop(self) -> None:
        """Stop after one last try at what waits."""
        self.stopping = True
        self.wake.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.stopping and self.failed is None:
            self.wake.wait(timeout=self.retry)  # woken by a closed segment; else a retry of what waits
            self.wake.clear()
            if self.pending and not self.stopping:
                self._ingest()
        if self.pending and self.failed is None:
            self._ingest()  # one last try; what still waits is ingested by the next run

    def _ingest(self) -> bool:
        """Ingest what waits; False when it waits (the archive is busy) or this ingest stopped."""
        paths = list(self.pending)
        try:
            stored = self.follower.step(paths)
        except (ArchiverError, duckdb.Error, OSError) as exc:
            self.failed = exc
            self.metrics.last_ingest_error = f"{type(exc).__name__}: {exc}"
            said = f"stopped ingesting into {self.db}: {exc}; recording goes on, and {len(paths)} segment(s) "
            self.metrics.tell("ingest-stopped", 1, logging.ERROR, said + "wait in the spool for `archiver ingest`")
            return False
        if stored:
            for _ in paths:
                self.pending.popleft()
            self.metrics.ingested.inc(len(paths))
            self.metrics.last_ingest_error = None
        return stored

    def _store(self, paths: list[str]):
        from ..archive import Archive

        with Archive.open(self.db, wait=self.wait) as archive:
            return archive.ingest(paths)

    def _waits(self, exc: Exception) -> None:
        self.metrics.ingest_retries.inc()
        self.metrics.last_ingest_error = f"{type(exc).__name__}: {exc}"
        self.metrics.tell("ingest", 1, logging.WARNING, f"the archive {self.db} is busy ({exc}); "
                          f"{len(self.pending)} segment(s) wait")  # fmt: skip
