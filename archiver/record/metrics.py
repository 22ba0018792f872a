"""What the proxy counts, in Prometheus' text format at `/-/metrics`, and what `/-/health` says of it."""

from __future__ import annotations

import logging
import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics, generate_latest

log = logging.getLogger("archiver.record")

disable_created_metrics()  # the *_created series: a start time per counter, of no use here

LOG_EVERY = 10.0
"""Seconds between two log lines about the same trouble; the ones between are counted in the next."""

DEGRADED_FOR = 60.0
"""Seconds after the last record the proxy could not keep during which `/-/health` says "degraded", unless a
record was kept since (recording has resumed)."""


class RecordMetrics:
    """The counters of one proxy (its own registry, so that several proxies may run in one process)."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        self.requests = Counter(
            "archiver_record_requests", "Requests forwarded upstream, by binding.", ["binding"], registry=registry
        )
        self.upstream_errors = Counter(
            "archiver_record_upstream_errors",
            "Requests the upstream agent did not answer (unreachable, failed, timeout, stream-broken).",
            ["reason"],
            registry=registry,
        )
        self.recorded = Counter(
            "archiver_record_recorded", "Exchanges and stream events written to the spool.", ["kind"], registry=registry
        )
        self.unrecorded = Counter(
            "archiver_record_unrecorded",
            "Exchanges and stream events forwarded but not recorded (queue-full, disk-full, write-error, too-large, "
            "stream-unrecorded, undecodable; decode-bound: a compressed stream past its decoding bound, once per "
            "stream).",
            ["reason"],
            registry=registry,
        )
        self.unindexed = Counter(
            "archiver_record_unindexed_bodies",
            "A2A bodies recorded only as their bytes: not JSON once decoded (not-json), or in a Content-Encoding "
            "the proxy cannot decode (encoding).",
            ["reason"],
            registry=registry,
        )
        self.segments = Counter("archiver_record_segments_closed", "Spool segments closed.", registry=registry)
        self.violations = Counter(
            "archiver_record_violations",
            "Citations v1 violations found in completed results, by agent and audit rule.",
            ["agent", "rule"],
            registry=registry,
        )
        self.ingested = Counter(
            "archiver_record_segments_ingested", "Closed segments ingested into the archive.", registry=registry
        )
        self.ingest_retries = Counter(
            "archiver_record_ingest_retries",
            "Ingests of a closed segment put off because the archive was locked or unavailable.",
            registry=registry,
        )
        self.queue_depth = Gauge(
            "archiver_record_queue_depth", "Records waiting for the spool writer.", registry=registry
        )
        self.open_streams = Gauge("archiver_record_open_streams", "Streams being forwarded.", registry=registry)
        self._lock = threading.Lock()
        self._last_logged: dict[str, float] = {}
        self._unlogged: dict[str, int] = {}
        self.last_unrecorded: float | None = None
        self.last_recorded: float | None = None
        self.last_ingest_error: str | None = None

    def lost(self, reason: str, detail: str = "", count: int = 1) -> None:
        """Count a record not kept, and say so loudly in the log (at most once per `LOG_EVERY` per reason)."""
        self.unrecorded.labels(reason).inc(count)
        self.last_unrecorded = time.monotonic()
        suffix = f": {detail}" if detail else ""
        self.tell(f"lost:{reason}", count, logging.ERROR, f"NOT recorded ({reason}){suffix}; traffic still flows")

    def kept(self, kind: str) -> None:
        """Count a record written to the spool: recording works (again)."""
        self.recorded.labels(kind).inc()
        self.last_recorded = time.monotonic()

    def unreadable_body(self, reason: str, text: str) -> None:
        """Count a body the index will not read, and log it (at most once per `LOG_EVERY` per reason)."""
        self.unindexed.labels(reason).inc()
        self.tell(f"unindexed:{reason}", 1, logging.WARNING, text)

    def recording(self) -> bool:
        """False while the last record the proxy could not keep is recent and none was kept since."""
        lost, kept = self.last_unrecorded, self.last_recorded
        if lost is None or time.monotonic() - lost >= DEGRADED_FOR:
            return True
        return kept is not None and kept > lost

    def upstream_failed(self, reason: str, text: str) -> None:
        """Count a request the upstream did not answer, and log it (at most once per `LOG_EVERY` per reason)."""
        self.upstream_errors.labels(reason).inc()
        self.tell(f"upstream:{reason}", 1, logging.WARNING, text)

    def tell(self, key: str, count: int, level: int, text: str) -> None:
        """Log `text` with how many times it happened since the last line about `key`, unless that line was
        logged less than `LOG_EVERY` seconds ago."""
        now = time.monotonic()
        with self._lock:
            self._unlogged[key] = self._unlogged.get(key, 0) + count
            if now - self._last_logged.get(key, -LOG_EVERY) < LOG_EVERY:
                return
            self._last_logged[key] = now
            told, self._unlogged[key] = self._unlogged[key], 0
        log.log(level, "archiver record: %s (%d since the last such line)", text, told)

    def text(self) -> bytes:
        return generate_latest(self.registry)

    def health(self) -> dict:
        """The proxy's own state: "ok", or "degraded" while it cannot record (a record was lost in the last
        `DEGRADED_FOR` seconds and none kept since) or ingest."""
        recording = self.recording()
        unrecorded = {
            sample.labels["reason"]: int(sample.value)
            for metric in self.unrecorded.collect()
            for sample in metric.samples
            if sample.name.endswith("_total")
        }
        return {
            "status": "ok" if recording and not self.last_ingest_error else "degraded",
            "recording": recording,
            "unrecorded": unrecorded,
            "queue_depth": int(self.queue_depth._value.get()),
            "open_streams": int(self.open_streams._value.get()),
            "ingest_error": self.last_ingest_error,
        }
