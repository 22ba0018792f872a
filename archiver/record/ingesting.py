"""The proxy's own ingest of its closed segments into an archive (`archiver record --db`): one thread, off
the event loop, calling the same library function as `archiver ingest`; while the archive is locked or
unavailable the segments wait and are tried again. One small module, so that another loop (such as
`archiver ingest --follow`) can take its place."""

from __future__ import annotations

import logging
import threading
from collections import deque
from pathlib import Path

import duckdb

from ..errors import ArchiverError
from .metrics import RecordMetrics

RETRY_SECONDS = 2.0


class SegmentIngest:
    """Ingests each closed segment it is told of (`closed`), in order, into the archive `db`."""

    def __init__(self, db: str, metrics: RecordMetrics, wait: float = 1.0, retry: float = RETRY_SECONDS) -> None:
        self.db, self.metrics, self.wait, self.retry = db, metrics, wait, retry
        self.pending: deque[Path] = deque()
        self.wake = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="archiver-record-ingest", daemon=True)

    def start(self, spool: Path) -> None:
        """Start, with the spool's closed segments already there (an ingest skips those it stored before)."""
        for path in sorted(spool.glob("rec-*")):
            if not path.name.endswith(".open"):
                self.pending.append(path)
        self.thread.start()

    def closed(self, path: Path) -> None:
        self.pending.append(path)
        self.wake.set()

    def stop(self) -> None:
        """Stop after one last try at what waits."""
        self.stopping = True
        self.wake.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.stopping:
            self.wake.wait(timeout=self.retry)  # woken by a closed segment; else a retry of what waits
            self.wake.clear()
            if self.pending and not self.stopping:
                self._ingest()
        if self.pending:
            self._ingest()  # one last try; what still waits is ingested by the next run

    def _ingest(self) -> bool:
        """Ingest what waits; False (nothing lost, it waits) when the archive cannot be opened or written now."""
        from ..archive import Archive

        paths = list(self.pending)
        try:
            with Archive.open(self.db, wait=self.wait) as archive:
                archive.ingest([str(path) for path in paths])
        except (ArchiverError, duckdb.Error, OSError) as exc:
            self.metrics.ingest_retries.inc()
            self.metrics.last_ingest_error = f"{type(exc).__name__}: {exc}"
            self.metrics.tell("ingest", 1, logging.WARNING, f"the archive {self.db} is unavailable ({exc}); "
                              f"{len(paths)} segment(s) wait")  # fmt: skip
            return False
        for _ in paths:
            self.pending.popleft()
        self.metrics.ingested.inc(len(paths))
        self.metrics.last_ingest_error = None
        return True
