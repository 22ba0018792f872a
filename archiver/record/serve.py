"""Put the recording proxy together and serve it with uvicorn: `archiver record`, and the Python API."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import secrets
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import uvicorn

from ..errors import UsageError
from ..redact import known, redacted, without_userinfo
from . import (
    CONNECT_TIMEOUT,
    DECODE_MAX_BYTES,
    HOST,
    PORT,
    READ_TIMEOUT,
    RECORD_MAX_BYTES,
    SEGMENT_BYTES,
    SEGMENT_SECONDS,
)
from .background import Background
from .conformance import LiveChecker
from .ingesting import SegmentIngest
from .metrics import RecordMetrics
from .proxy import ProxySettings, RecordingProxy
from .segments import SegmentWriter, SpoolSettings

log = logging.getLogger("archiver.record")

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
AUTHORIZATION_VARIABLE = "ARCHIVER_UPSTREAM_AUTHORIZATION"
"""The `Authorization` header the proxy sends the upstream (`Bearer T`, `Basic B`) when a client sends none."""


@dataclass
class RecordOptions:
    upstream: str
    spool: Path
    host: str = HOST
    port: int = PORT
    segment_bytes: int = SEGMENT_BYTES
    segment_seconds: float = SEGMENT_SECONDS
    record_max_bytes: int = RECORD_MAX_BYTES
    rewrite_card: bool = False
    public_url: str | None = None
    alerts: Path | None = None
    db: str | None = None
    wait: float = 1.0
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float | None = READ_TIMEOUT
    durable: bool = False
    decode_max_bytes: int = DECODE_MAX_BYTES
    proxy_id: str = ""
    authorization: str | None = field(default=None, repr=False)
    """The upstream's credential, sent as `Authorization` when a client sends none: given, else
    $ARCHIVER_UPSTREAM_AUTHORIZATION, else the userinfo of `upstream` (as Basic), which is taken out of it."""

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise UsageError(f"{without_userinfo(self.upstream)} is no http:// or https:// URL", "--upstream")
        self.proxy_id = self.proxy_id or secrets.token_hex(4)
        parts = urlsplit(self.upstream)
        userinfo = (unquote(parts.username or ""), unquote(parts.password or ""))
        self.upstream = without_userinfo(self.upstream)  # shown, logged and stored without its credential
        self.authorization = self.authorization or os.environ.get(AUTHORIZATION_VARIABLE) or _basic(*userinfo)
        known(self.authorization, userinfo[1])

    @property
    def public(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"


class Recorder:
    """The proxy's parts: the ASGI app, the background thread (spool, live check), the ingest (with `db`)."""

    def __init__(self, options: RecordOptions) -> None:
        self.options = options
        self.metrics = RecordMetrics()
        self.ingest = SegmentIngest(options.db, self.metrics, options.wait) if options.db else None
        settings = SpoolSettings(options.spool, options.proxy_id, options.segment_bytes, options.segment_seconds)
        self.writer = SegmentWriter(settings, self._closed)
        self.checker = LiveChecker(
            agent_name(options.upstream, options.authorization), options.upstream, self.metrics, options.alerts
        )
        self.background = Background(self.writer, self.checker, self.metrics)
        proxy_settings = ProxySettings(
            options.upstream,
            options.proxy_id,
            options.record_max_bytes,
            options.connect_timeout,
            options.read_timeout,
            options.public if options.rewrite_card else None,
            options.durable,
            options.decode_max_bytes,
            options.authorization,
        )
        self.app = RecordingProxy(proxy_settings, self, self.metrics)

    def _closed(self, path: Path) -> None:
        self.metrics.segments.inc()
        if self.ingest is not None:
            self.ingest.closed(path)

    def put(self, item: tuple, size: int = 0, synced=None) -> bool:
        return self.background.put(item, size, synced)

    def start(self) -> None:
        self.background.start()
        if self.ingest is not None:
            self.ingest.start(self.options.spool)

    def stop(self) -> None:
        self.background.stop()
        self.checker.close()
        if self.ingest is not None:
            self.ingest.stop()


def _basic(user: str, password: str) -> str | None:
    """The Basic credential of a URL's userinfo; None without one."""
    if not user and not password:
        return None
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def agent_name(upstream: str, authorization: str | None = None) -> str:
    """The agent's name from its card at the well-known path, else its URL (asked once, briefly, at start)."""
    headers = {"Authorization": authorization} if authorization else {}
    for path in CARD_PATHS:
        try:
            asked = urllib.request.Request(upstream.rstrip("/") + path, headers=headers)
            with urllib.request.urlopen(asked, timeout=2.0) as answer:
                card = json.loads(answer.read())
        except (OSError, ValueError):
            continue
        if isinstance(card, dict) and isinstance(card.get("name"), str):
            return card["name"]
    return upstream


def server(options: RecordOptions) -> tuple[uvicorn.Server, Recorder]:
    recorder = Recorder(options)
    config = uvicorn.Config(
        recorder.app,
        host=options.host,
        port=options.port,
        lifespan="on",
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=5,
        backlog=4096,
    )
    return uvicorn.Server(config), recorder


def serve(options: RecordOptions) -> None:
    """Serve until interrupted (SIGINT, SIGTERM); open streams end as `proxy-shutdown`, segments are closed."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    running, recorder = server(options)
    if recorder.writer.recovered:
        log.warning("archiver record: closed %d segment(s) that an earlier run left open (it was killed): %s",
                    len(recorder.writer.recovered), ", ".join(p.name for p in recorder.writer.recovered))  # fmt: skip
    log.info(start_line(options))
    running.run()


def start_line(options: RecordOptions) -> str:
    """What the proxy says as it starts: where it listens, for which upstream (never its credential)."""
    ingesting = f", ingesting into {redacted(options.db)}" if options.db else ""
    return (
        f"archiver record: proxy {options.proxy_id} listening on http://{options.host}:{options.port} "
        f"for {options.upstream}, recording into {options.spool}{ingesting}"
    )


class ProxyThread:
    """The proxy served in a thread of this process (for tests and benchmarks): `start()`, then `stop()`."""

    def __init__(self, options: RecordOptions) -> None:
        self.server, self.recorder = server(options)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def start(self) -> ProxyThread:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the recording proxy did not start")
            threading.Event().wait(0.01)
        return self

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose, for `port=0`)."""
        return self.server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join()
