"""The Starlette application of `archiver serve`: one route per page (`pages.PAGES`), each with its
`.json` twin, the data handed to a renderer (`renderers`), errors turned into answers in one place
(`failure`), the token and the headers around every answer (`guard`).

Read-only by construction: every request opens its own read-only connection to the archive and closes
it before answering (a writer waits at most for the requests under way), and only GET and HEAD exist.
A page's JSON twin is the same path with `.json` (or the request's `Accept: application/json`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import ArchiverError, UsageError
from ..redact import known, redacted
from ..render.html import STYLE
from ..store import views
from .cells import fmt, heading, link, shown_path, stat_words
from .connections import ACCEPT_BURST, Limits, bounded_protocol, return_memory
from .data import Snapshots
from .form import answers
from .guard import Guard, Hosts
from .pages import PAGES, Shown, downloaded
from .renderers import respond
from .tables import whole_words
from .urls import href

HERE = Path(__file__).parent
REQUEST_WAIT = 2.0
"""Seconds a request waits for a writer (an ingest committing) before answering 503."""
HOLD_SECONDS = 2.0
"""Seconds the shared read-only connection admits new requests while requests never pause."""
WRITERS_TURN_SECONDS = 0.15
"""Seconds it then stays closed: longer than a waiting writer's pause between tries (`store.connection`)."""
BUILDING_AT_ONCE = 4
"""Answers built at once, each in a thread: building one can take tens of MiB for a while, and two cores gain
nothing from more at once (with anyio's default, 40, the server stayed 545 MiB larger after 40 clients of a
3 MB answer had gone: benchmarks/serve_stuck.py)."""
STOP_SECONDS = 5.0
"""Seconds a stopping server waits for the queries it interrupted to end."""


class StoppingError(ArchiverError):
    """A request that arrived while the server stops."""

    http_status = 503


class Server:
    """The archive the pages read and what is kept of it between requests."""

    def __init__(self, db: str | None, token: str | None) -> None:
        self.db, self.token = db, token
        self.snapshots = Snapshots()
        self._turn = threading.Condition()
        self._shared = None  # the read-only Archive the requests under way share
        self._users = 0
        self._opened = 0.0  # when it was opened
        self._closing = False  # admits no more requests: it closes when those under way end
        self._reopen_at = 0.0  # nothing opens it again before then: a writer's turn
        self._cursors: set = set()  # the cursors of the requests under way
        self._stopped = False  # the server is stopping: no request reads the archive any more
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True), trim_blocks=True
        )
        self.templates.globals.update(
            link=link,
            href=href,
            shown_path=shown_path,
            fmt=fmt,
            heading=heading,
            stat_words=stat_words,
            whole_words=whole_words,
            answers=answers,
        )

    @contextmanager
    def archive(self):
        """The archive for one request: a cursor of one read-only connection that the requests under way
        share (DuckDB keeps one instance of a file per process), opened by the first and closed by the
        last, so that between requests no connection holds the file and a writer can take it. Under
        requests that never pause, the connection admits new ones for `HOLD_SECONDS`, then closes when
        those under way end and stays closed for `WRITERS_TURN_SECONDS`: a waiting writer (which tries
        again at least that often) gets the file, and the requests wait for its commit."""
        shared = self._join()
        try:
            cursor = views.cursor(shared.con)
        except BaseException:
            self._leave()
            raise
        with self._turn:
            self._cursors.add(cursor)
        try:
            yield type(shared)(cursor, shared.path, shared.location)
        finally:
            with self._turn:
                self._cursors.discard(cursor)
            cursor.close()
            self._leave()

    def _join(self):
        from ..archive import Archive

        with self._turn:
            while not self._stopped and (self._closing or time.monotonic() < self._reopen_at):
                self._turn.wait(None if self._closing else self._reopen_at - time.monotonic())
            if self._stopped:
                raise StoppingError("the server is stopping")
            if self._shared is None:
                self._shared = Archive.open(self.db, read_only=True, wait=REQUEST_WAIT)
                self._opened = time.monotonic()
            self._users += 1
            self._closing = time.monotonic() - self._opened >= HOLD_SECONDS
            return self._shared

    def _leave(self) -> None:
        with self._turn:
            self._users -= 1
            if self._users == 0:
                self._shared.close()
                self._shared = None
                if self._closing:
                    self._closing = False
                    self._reopen_at = time.monotonic() + WRITERS_TURN_SECONDS
                self._turn.notify_all()

    def warm(self) -> None:
        """Make the overview's snapshot now (the whole audit: seconds at 10M claims), not at the first
        request; an archive that is busy or missing is left to the requests to report."""
        try:
            with self.archive() as archive:
                self.snapshots.get(archive)
        except ArchiverError:
            pass
        except Exception:
            if not self._stopped:  # else: its query was interrupted by `stop`
                raise

    def stop(self, wait: float = STOP_SECONDS) -> bool:
        """Interrupt every query under way (the warm-up's, the requests') and wait up to `wait` seconds for
        them to leave, which closes the connection: no thread may be inside DuckDB as the process exits
        (DuckDB torn down under one aborts the process: `terminate called without an active exception`).
        Whether they all left."""
        deadline = time.monotonic() + wait
        with self._turn:
            self._stopped = True
            self._turn.notify_all()
            while self._users:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                for cursor in list(self._cursors):
                    cursor.interrupt()
                self._turn.wait(min(0.05, remaining))
            return True

    def remembered(self, archive, key: tuple, make):
        """`make()`, kept until the archive changes (`data.Snapshots.remembered`)."""
        return self.snapshots.remembered(archive, key, make)


# One route per page, errors answered in one place.


class Twin(Convertor):
    """`.json` or nothing at the end of a page's address: `/search` and `/search.json` are one route."""

    regex = r"(?:\.json)?"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


class Index(Twin):
    """The overview's address: `/` or `/index.json`."""

    regex = r"(?:index\.json)?"


register_url_convertor("twin", Twin())
register_url_convertor("index", Index())


def route_of(path: str) -> str:
    """A page's route: its path, with the `.json` of its twin optional (a path parameter's page reads
    `.json` off its name)."""
    if path == "/":
        return "/{twin:index}"
    return path if path.endswith(":path}") else path + "{twin:twin}"


def failure(server: Server, request: Request, exc: ArchiverError) -> Response:
    """An error a request met as its answer: one line, as HTML or JSON as the request asked, with its status."""
    status = exc.http_status
    hint = f"{exc.option}: " if isinstance(exc, UsageError) and exc.option else ""
    shown = Shown(
        "error.html", "Error", {"error": hint + str(exc)}, {"message": hint + str(exc), "status": status}, False
    )
    response = respond(server, request, shown, status)
    if status == 503:
        response.headers["retry-after"] = "1"
    return response


def handled(server: Server, page):
    def endpoint(request: Request) -> Response:
        try:
            shown = page(server, request)
        except ArchiverError as exc:
            return failure(server, request, exc)
        return shown if isinstance(shown, Response) else respond(server, request, shown)

    return endpoint


@cache
def _css() -> bytes:
    """The `show` page's rules (`archiver.render.html.STYLE`), then the serve pages' own (static/serve.css)."""
    return (STYLE + (HERE / "static" / "serve.css").read_text(encoding="utf-8")).encode()


def stylesheet(request: Request) -> Response:
    return Response(_css(), media_type="text/css; charset=utf-8", headers={"cache-control": "max-age=300"})


def create_app(db: str | None = None, token: str | None = None, hosts: Hosts | None = None) -> Guard:
    """The application serving the archive `db` (default $ARCHIVER_DB, else ./archive.duckdb); every
    request must carry `token` when one is given, and name one of `hosts` (default: loopback's names) in
    its `Host`."""
    server = Server(db, token)
    routes = [Route(route_of(path), handled(server, page), methods=["GET", "HEAD"]) for path, page in PAGES.items()]
    routes.append(Route("/download/{file}", handled(server, downloaded), methods=["GET", "HEAD"]))
    routes.append(Route("/favicon.ico", lambda request: Response(status_code=204)))
    routes.append(Route("/static/serve.css", stylesheet))
    guard = Guard(Starlette(routes=routes, lifespan=_building_bounded), token, hosts or Hosts.bound("127.0.0.1"))
    guard.server = server
    return guard


@asynccontextmanager
async def _building_bounded(app):
    """At most `BUILDING_AT_ONCE` answers are built at once (each in a thread of anyio's pool)."""
    import anyio.to_thread

    anyio.to_thread.current_default_thread_limiter().total_tokens = BUILDING_AT_ONCE
    yield


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


TOKEN_VARIABLES = ("ARCHIVER_SERVE_TOKEN", "ARCHIVER_TOKEN")
"""Where the token is read from when neither `--token` nor `--token-file` gives it (`ARCHIVER_TOKEN`: its
first name, still read)."""


def token_from(given: str | None = None, file: str | Path | None = None) -> str | None:
    """The token every request must carry: `given`, else the first line of `file`, else the first of
    `TOKEN_VARIABLES` set; None for none. A file and a token both given, or a file without one, is refused."""
    if given and file:
        raise UsageError("give the token once: --token or --token-file", "--token-file")
    if file:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{file}: cannot read the token: {exc.strerror or exc}", "--token-file") from None
        if not lines or not lines[0].strip():
            raise UsageError(f"{file}: its first line is empty: write the token there", "--token-file")
        given = lines[0].strip()
    given = given or next((os.environ[name] for name in TOKEN_VARIABLES if os.environ.get(name)), None)
    known(given)
    return given


class RedactedLog(logging.Filter):
    """uvicorn's log lines (its access log's request lines) with every secret masked: `?token=` too."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redacted(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redacted(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def serve(
    db: str | None,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    log: bool = True,
    limits: Limits | None = None,
    token_file: str | Path | None = None,
    allow_hosts: tuple[str, ...] = (),
    access_log: bool = False,
) -> None:
    """Serve until interrupted; another host than loopback needs a token (`token`, `token_file`, else
    `TOKEN_VARIABLES`; `UsageError` without one). A missing archive, or an address it cannot listen on, is
    refused before serving. Requests must name a host it was bound to, `localhost` or one of `allow_hosts`
    (`guard.Hosts`). Each connection is held to `limits` (`connections.Limits`: a deadline per request, a
    bounded head, bounded send buffers, a number of connections below the file limit). Stopped, it
    interrupts what still reads the archive before the process exits. `access_log` prints a line per
    request (uvicorn's access log, secrets masked: `RedactedLog`); without it only the start and errors."""
    import uvicorn

    from ..archive import Archive

    token = token_from(token, token_file)
    if not is_loopback(host) and not token:
        raise UsageError(
            f"serving on {host}, not loopback, needs a token: --token-file or ARCHIVER_SERVE_TOKEN", "--host"
        )
    with Archive.open(db, read_only=True) as archive:  # no archive there, or not one: one line now, not per page
        where = archive.location.describe()
    listening = _listen(host, port)
    app = create_app(db, token, Hosts.bound(host, listening.getsockname()[0], allow_hosts))
    warming = threading.Thread(target=app.server.warm, name="archiver-serve-warm", daemon=True)
    warming.start()
    bound = listening.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"archiver serve: {where} read-only at http://{shown}:{bound}/ (Ctrl-C stops)", flush=True)
    limits = limits or Limits()
    config = uvicorn.Config(
        app,
        log_level="info" if log else "warning",
        access_log=access_log,
        http=bounded_protocol(limits),
        backlog=ACCEPT_BURST,
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(RedactedLog())
    return_memory()
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listening])
        if signal.SIGINT in getattr(server, "_captured_signals", ()):
            # uvicorn raises again the signal it stopped for; when asyncio's loop ended first, that raised nothing
            # and the process ended 0 (seen on a loaded machine): a stop by SIGINT ends 130 all the same
            raise KeyboardInterrupt
    finally:
        app.server.stop()
        warming.join(STOP_SECONDS)


def _listen(host: str, port: int):
    """A socket listening on `host`:`port`; one the user cannot have is a usage error naming why."""
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family, backlog=ACCEPT_BURST)
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise UsageError(f"cannot listen on {host}:{port}: {why}", "--port") from None
