"""The proxy's one background thread: it takes what the proxy forwarded from a bounded queue, appends it to
the spool and hands it to the live conformance check. The proxy never waits for it: when the queue is full,
the record is dropped and counted (`archiver_record_unrecorded_total{reason="queue-full"}`)."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from .metrics import RecordMetrics
from .segments import SegmentWriter, SpoolWriteError

log = logging.getLogger("archiver.record")

QUEUE_RECORDS = 65536
"""Records that may wait for the writer: about 200 MB of the largest ones a recording cap of 32 MiB lets
through would be far more, so the proxy also counts bytes (see `QUEUE_BYTES`)."""

QUEUE_BYTES = 256 * 2**20
"""Bytes of bodies and events that may wait for the writer; past it a record is dropped and counted."""

_STOP = ("stop",)


class Background:
    """Feeds `writer` (the spool) and `checker` (live conformance, or None) from one thread, in order."""

    def __init__(self, writer: SegmentWriter, checker: Any, metrics: RecordMetrics) -> None:
        self.writer, self.checker, self.metrics = writer, checker, metrics
        self.queue: queue.Queue = queue.Queue(QUEUE_RECORDS)
        self.bytes = 0
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="archiver-record-spool", daemon=True)
        self.tick = min(1.0, writer.settings.segment_seconds / 4)

    def start(self) -> None:
        self.thread.start()

    def put(self, item: tuple, size: int = 0, synced: Callable[[], None] | None = None) -> bool:
        """Queue one record (`size`: its bytes); False, counted and logged, when it cannot wait. `synced` (the
        durable mode's) is called once the record is written and fsynced, or could not be."""
        with self._lock:
            if self.bytes + size > QUEUE_BYTES:
                self.metrics.lost("queue-full", "the spool writer is behind")
                return False
            self.bytes += size
        try:
            self.queue.put_nowait((item, size, synced))
        except queue.Full:
            with self._lock:
                self.bytes -= size
            self.metrics.lost("queue-full", "the spool writer is behind")
            return False
        return True

    def stop(self) -> None:
        """Write what waits, end the streams still open (proxy-shutdown), close every segment."""
        self.queue.put((_STOP, 0, None))
        self.thread.join()

    def _run(self) -> None:
        waiting: list[Callable[[], None]] = []  # durable records written, not yet fsynced
        while True:
            try:
                item, size, synced = self.queue.get(timeout=self.tick)
            except queue.Empty:
                self._rotate()
                continue
            with self._lock:
                self.bytes -= size
            self.metrics.queue_depth.set(self.queue.qsize())
            if item is _STOP:
                break
            self._record(item)
            if synced is not None:
                waiting.append(synced)
            if waiting and self.queue.empty():  # one fsync for every durable record written meanwhile
                self._sync(waiting)
            self._check(item)
            self._rotate()
        self._sync(waiting)
        try:
            self.writer.close()
        except OSError as exc:
            self.metrics.lost(SpoolWriteError("write-error", exc).reason, str(exc))

    def _sync(self, waiting: list[Callable[[], None]]) -> None:
        """fsync what was written, then release the exchanges that wait for it."""
        try:
            self.writer.sync()
        except OSError as exc:
            self.metrics.lost(SpoolWriteError("write-error", exc).reason, f"fsync failed: {exc}", len(waiting))
        for release in waiting:
            release()
        waiting.clear()

    def _rotate(self) -> None:
        try:
            self.writer.rotate_old()
        except OSError as exc:
            log.error("archiver record: a spool segment could not be closed: %s", exc)

    def _record(self, item: tuple) -> None:
        kind, *args = item
        if kind in ("event", "stream_end") and not self.writer.knows(_exchange(kind, args)):
            self.metrics.lost("stream-unrecorded", "its stream-open could not be written")
            return
        try:
            getattr(self.writer, kind)(*args)
        except SpoolWriteError as exc:
            self.metrics.lost(exc.reason, str(exc))
            return
        self.metrics.kept(kind)

    def _check(self, item: tuple) -> None:
        if self.checker is None:
            return
        kind, *args = item
        try:
            getattr(self.checker, kind)(*args)
        except Exception:  # the check must never stop the recording
            log.exception("archiver record: the live conformance check failed on a record")


def _exchange(kind: str, args: list) -> str:
    return args[0] if kind == "event" else args[0]["exchange"]
