"""The Starlette application of `archiver serve`: pages, their JSON twins, the token and the headers.

Read-only by construction: every request opens its own read-only connection to the archive and closes
it before answering (a writer waits at most for the requests under way), and only GET and HEAD exist.
A page's JSON twin is the same path with `.json` (or the request's `Accept: application/json`).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict
from functools import cache
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..audit.rules import ERROR, RULES_BY_ID, WARNING
from ..errors import ArchiverError, UsageError
from ..query.lineage import QUERIES
from ..query.selection import Selection
from ..query.transcript import NotFoundError
from ..render.html import STYLE, result_html
from ..render.paths import display_path
from ..store.connection import ArchiveBusyError
from ..verify.run import VERDICTS
from . import charts, data, form
from .connections import ACCEPT_BURST, Limits, bounded_protocol
from .downloads import DOWNLOADS, download
from .headers import HEADERS

HERE = Path(__file__).parent
COOKIE = "archiver_token"
REQUEST_WAIT = 2.0
"""Seconds a request waits for a writer (an ingest committing) before answering 503."""
HOLD_SECONDS = 2.0
"""Seconds the shared read-only connection admits new requests while requests never pause."""
WRITERS_TURN_SECONDS = 0.15
"""Seconds it then stays closed: longer than a waiting writer's pause between tries (`store.connection`)."""


class Server:
    """The archive the pages read and what is kept of it between requests."""

    def __init__(self, db: str | None, token: str | None) -> None:
        self.db, self.token = db, token
        self.snapshots = data.Snapshots()
        self._turn = threading.Condition()
        self._shared = None  # the read-only Archive the requests under way share
        self._users = 0
        self._opened = 0.0  # when it was opened
        self._closing = False  # admits no more requests: it closes when those under way end
        self._reopen_at = 0.0  # nothing opens it again before then: a writer's turn
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True), trim_blocks=True
        )
        self.templates.globals.update(link=link, href=href, display_path=display_path, fmt=fmt)

    @contextmanager
    def archive(self):
        """The archive for one request: a cursor of one read-only connection that the requests under way
        share (DuckDB keeps one instance of a file per process), opened by the first and closed by the
        last, so that between requests no connection holds the file and a writer can take it. Under
        requests that never pause, the connection admits new ones for `HOLD_SECONDS`, then closes when
        those under way end and stays closed for `WRITERS_TURN_SECONDS`: a waiting writer (which tries
        again at least that often) gets the file, and the requests wait for its commit."""
        shared = self._join()
        cursor = shared.con.cursor()
        try:
            yield type(shared)(cursor, shared.path, shared.location)
        finally:
            cursor.close()
            self._leave()

    def _join(self):
        from ..archive import Archive

        with self._turn:
            while self._closing or time.monotonic() < self._reopen_at:
                self._turn.wait(None if self._closing else self._reopen_at - time.monotonic())
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

    def remembered(self, archive, key: tuple, make):
        """`make()`, kept until the archive changes (`data.Snapshots.remembered`)."""
        return self.snapshots.remembered(archive, key, make)


def fmt(value: Any) -> str:
    """A value as a table cell shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) >= 1000 else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "; ".join(fmt(v) for v in value)
    return str(value)


LINKED = {
    "study": "study",
    "period": "period",
    "source_column": "column",
    "source_table": "table",
    "agent": "agent",
    "task_id": "result",
    "message_id": "result",
    "context_id": "result",
    "id": None,
}


def href(kind: str, name: Any, **query) -> str:
    path = f"/{kind}/{_quote(str(name))}"
    return path + ("?" + urlencode(query, doseq=True) if query else "")


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


def link(field_name: str, value: Any, row: dict | None = None) -> Markup:
    """A cell's value, linked to its own page where it has one (escaped either way)."""
    text = escape(fmt(value))
    kind = LINKED.get(field_name)
    if field_name == "id" and row is not None:
        kind = {"task": "result", "context": "result", "agent": "agent", "source_file": None}.get(row.get("kind"))
    if value is None or value == "" or kind is None:
        return Markup(text)
    anchor = ""
    if kind == "result" and row is not None and row.get("part_index") is not None:
        anchor = f"#part-{int(row['part_index'])}"
    return Markup(f'<a href="{escape(href(kind, value))}{anchor}">{text}</a>')


def wants_json(request: Request) -> bool:
    if request.url.path.endswith(".json"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def answer(server: Server, request: Request, template: str, context: dict, twin: dict) -> Response:
    if wants_json(request):
        return Response(data.plain_json(twin), media_type="application/json")
    query = request.url.query
    page = server.templates.get_template(template).render(
        request=request, json_href=_twin_path(request.url.path) + (f"?{query}" if query else ""), **context
    )
    return HTMLResponse(page)


def _twin_path(path: str) -> str:
    return "/index.json" if path == "/" else path + ".json"


def _name(request: Request, key: str) -> str:
    name = request.path_params[key]
    return name[: -len(".json")] if name.endswith(".json") else name


def _page(request: Request) -> tuple[int, int]:
    """The page and its size asked for, brought within their bounds (`data.page_bounds`)."""
    page, size = (_whole(request, name, default) for name, default in (("page", 1), ("size", data.PAGE_SIZE)))
    return data.page_bounds(page, size)


def _whole(request: Request, name: str, default: int) -> int:
    given = request.query_params.get(name) or default
    try:
        return int(given)
    except ValueError:
        shown = given if len(given) <= 40 else given[:40] + "…"
        raise UsageError(f"{shown!r} is not a whole number", name) from None


def _known(value: str, known, parameter: str) -> None:
    if value not in known:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise UsageError(f"{shown!r} is not one of {', '.join(known)}", parameter)


# The pages.


def ask(server: Server, archive, question: tuple, make):
    """`make()`, the answer to `question`, asked once per state of the archive. The question holds the
    values a page read from its address (the parameters it knows, parsed and bounded), never the query
    string itself: parameters a page does not know change nothing, and a page and its `.json` twin
    share the answer."""
    return server.remembered(archive, question, make)


def overview(server: Server, request: Request) -> Response:
    with server.archive() as archive:
        snap = server.snapshots.get(archive)
        verdicts = data.verdict_counts(archive.con)
        per_day = ask(server, archive, ("per_day",), lambda: data.findings_per_day(archive.con, snap))
    summary = snap.summary
    results_chart = charts.stacked_bars(
        snap.results_per_day,
        "day",
        "agent",
        "results",
        lambda day, agent: "/search?" + urlencode(_day_query(day, agent=agent if agent != "(no agent)" else "")),
        "Results per day, by agent",
    )
    findings_chart = charts.stacked_bars(
        per_day,
        "day",
        "rule",
        "findings",
        lambda day, rule: "/audit?" + urlencode(_day_query(day, rule=rule)),
        "Findings per day, by rule",
    )
    twin = {
        "stats": snap.stats,
        "findings": summary["findings"],
        "findings_by_severity": summary["findings_by_severity"],
        "verdicts": verdicts,
        "results_per_day": snap.results_per_day,
        "most_cited": snap.subjects,
        "findings_per_day": per_day,
        "audit_summary": summary,
    }
    context = {"twin": twin, "charts": [Markup(results_chart), Markup(findings_chart)], "title": "Overview"}
    return answer(server, request, "overview.html", context, twin)


def _day_query(day: str, **more: str) -> dict:
    """The filters of one day (a bare date as --until includes that day) and more."""
    return {"since": day, "until": day, **{k: v for k, v in more.items() if v}}


def search(server: Server, request: Request) -> Response:
    kind = request.query_params.get("kind") or "claims"
    if kind not in QUERIES:
        raise UsageError(f"kind is one of {', '.join(QUERIES)}", "kind")
    selection = form.selection(request.query_params)
    order_by = request.query_params.get("order_by") or None
    page, size = _page(request)
    if selection == Selection():  # the whole archive is the overview's; a list of it would read every claim
        found = data.Page(QUERIES[kind](selection).fields, [], 0, False, 1, size)
    else:
        with server.archive() as archive:
            found = ask(
                server,
                archive,
                ("rows", kind, repr(selection), order_by, page, size),
                lambda: data.lineage_page(archive.con, kind, selection, order_by, page, size),
            )
    twin = {
        "kind": kind,
        "filters": selection.as_dict(),
        "order_by": order_by,
        "needs_filter": selection == Selection(),  # no rows: a search without a filter lists nothing
        **found.as_dict(),
    }
    context = {
        "title": f"Search {kind}",
        "kind": kind,
        "kinds": list(QUERIES),
        "fields": form.fields(request.query_params),
        "order_by": order_by or "",
        "found": found,
        "unfiltered": selection == Selection(),
        "pager": _pager(request, found),
        "sorts": _sorts(request, found.fields, order_by),
        "downloads": [
            (f, "/download/" + kind + "." + f + _query(request, drop=("page", "size", "kind"))) for f in DOWNLOADS
        ],
    }
    return answer(server, request, "search.html", context, twin)


def _query(request: Request, drop: tuple[str, ...] = (), **replace: Any) -> str:
    items = [(k, v) for k, v in request.query_params.multi_items() if k not in drop and k not in replace and v != ""]
    items += [(k, v) for k, v in replace.items() if v is not None]
    return "?" + urlencode(items) if items else ""


def _pager(request: Request, found: data.Page) -> dict:
    path = request.url.path
    return {
        "previous": path + _query(request, page=found.page - 1) if found.page > 1 else None,
        "next": path + _query(request, page=found.page + 1) if found.page < found.pages or found.capped else None,
    }


def _sorts(request: Request, fields: tuple[str, ...], order_by: str | None) -> dict[str, str]:
    """Each column's link that sorts by it (descending when it is already the ascending order)."""
    return {
        name: request.url.path + _query(request, page=None, order_by=f"-{name}" if order_by == name else name)
        for name in fields
    }


def result(server: Server, request: Request) -> Response:
    ident = _name(request, "ident")
    copy = request.query_params.get("copy") or None
    with server.archive() as archive:
        results = ask(server, archive, ("results", ident, copy), lambda: archive.results(ident, copy))
    subjects = []
    for view in results:
        links = [("agent", view.agent)] if view.agent else []
        for c in view.citations:
            links += [("study", c.study), ("period", c.period), ("column", c.source_column), ("table", c.source_table)]
        subjects.append([(kind, name) for kind, name in dict.fromkeys(links) if name])
    twin = {"id": ident, "results": [asdict(view) for view in results]}
    context = {
        "title": f"Result {ident}",
        "shown": [(Markup(result_html(view)), links, view) for view, links in zip(results, subjects, strict=True)],
    }
    return answer(server, request, "result.html", context, twin)


def subject(server: Server, request: Request) -> Response:
    kind = request.url.path.split("/")[1]
    name = _name(request, "name")
    selection = Selection.of(**{data.SUBJECTS[kind]: [name]})
    with server.archive() as archive:
        periods = ask(server, archive, ("periods", kind, name), lambda: data.by_period(archive.con, selection))
        small = ask(server, archive, ("small", kind, name), lambda: data.small_bases(archive.con, selection))
        per_day = verdicts = disagreeing = None
        if kind == "column":
            snap = server.snapshots.get(archive)
            disagreeing = ask(server, archive, ("conflicts", name), lambda: data.conflicts(archive.con, snap, name))
        if kind == "agent":
            snap = server.snapshots.get(archive)
            per_day = ask(server, archive, ("per_day", name), lambda: data.findings_per_day(archive.con, snap, name))
            verdicts = ask(
                server, archive, ("verdicts_per_day", name), lambda: data.verdicts_per_day(archive.con, name)
            )
    twin = {
        "kind": kind,
        "name": name,
        "by_period": periods,
        "small_bases": small.as_dict(),
    }
    if disagreeing is not None:
        twin["conflicts"] = disagreeing
    chart = charts.ranges(
        periods,
        lambda period: "/search?" + urlencode({data.SUBJECTS[kind]: name, "period": period}),
        f"Cited values by period ({kind} {name})",
    )
    shown = [Markup(chart)]
    if per_day is not None:
        twin |= {"findings_per_day": per_day, "verdicts_per_day": verdicts}
        shown.append(
            Markup(
                charts.stacked_bars(
                    per_day,
                    "day",
                    "rule",
                    "findings",
                    lambda day, rule: "/audit?" + urlencode(_day_query(day, rule=rule, agent=name)),
                    "Findings per day, by rule",
                )
            )
        )
        shown.append(
            Markup(
                charts.stacked_bars(
                    verdicts,
                    "day",
                    "verdict",
                    "verdicts",
                    lambda day, verdict: "/verify?" + urlencode({"agent": name, "verdict": verdict}),
                    "Verdicts per day",
                )
            )
        )
    context = {
        "title": f"{kind} {name}",
        "kind": kind,
        "name": name,
        "periods": periods,
        "charts": shown,
        "small": small,
        "conflicts": disagreeing,
        "search": "/search?" + urlencode({data.SUBJECTS[kind]: name}),
        "audit": "/audit?" + urlencode({"agent": name}) if kind == "agent" else None,
    }
    return answer(server, request, "subject.html", context, twin)


def audit(server: Server, request: Request) -> Response:
    params = request.query_params
    rules = [r for r in params.getlist("rule") if r]
    for rule in rules:
        _known(rule, RULES_BY_ID, "rule")
    severity = params.get("severity") or None
    if severity is not None:
        _known(severity, (ERROR, WARNING), "severity")
    selection = form.selection(params, only=data.FINDING_FILTERS)
    page, size = _page(request)
    with server.archive() as archive:
        snap = server.snapshots.get(archive)
        found = ask(
            server,
            archive,
            ("findings", tuple(rules), severity, repr(selection), page, size),
            lambda: data.findings_page(archive.con, snap, rules, severity, selection, page, size),
        )
    twin = {"filters": {"rule": rules, "severity": severity, **selection.as_dict()}, **found.as_dict()}
    context = {
        "title": "Audit findings",
        "found": found,
        "pager": _pager(request, found),
        "rules": list(snap.summary["findings"]),
        "chosen": rules,
        "severity": severity,
        "fields": form.fields(params, only=data.FINDING_FILTERS),
        "summary": snap.summary,
    }
    return answer(server, request, "audit.html", context, twin)


def verify(server: Server, request: Request) -> Response:
    params = request.query_params
    verdict = params.get("verdict") or None
    if verdict is not None:
        _known(verdict, VERDICTS, "verdict")
    selection = form.selection(params)
    page, size = _page(request)
    with server.archive() as archive:
        found = ask(
            server,
            archive,
            ("verdicts", repr(selection), verdict, page, size),
            lambda: data.verdicts_page(archive.con, selection, verdict, page, size),
        )
        counts = data.verdict_counts(archive.con)
    twin = {"filters": {"verdict": verdict, **selection.as_dict()}, "verdicts_by_status": counts, **found.as_dict()}
    context = {
        "title": "Verdicts",
        "found": found,
        "pager": _pager(request, found),
        "counts": counts,
        "verdicts": VERDICTS,
        "verdict": verdict,
        "fields": form.fields(params),
    }
    return answer(server, request, "verify.html", context, twin)


def downloaded(server: Server, request: Request) -> Response:
    kind, _, fmt_ = request.path_params["file"].partition(".")
    if kind not in QUERIES or fmt_ not in DOWNLOADS:
        raise NotFoundError(
            f"no list {request.path_params['file']}: claims, citations or impact as {', '.join(DOWNLOADS)}"
        )
    selection = form.selection(request.query_params)
    order_by = request.query_params.get("order_by") or None
    with server.archive() as archive:
        return download(archive, kind, fmt_, selection, order_by)


# Errors, the token and the headers around every answer.


def _failure(server: Server, request: Request, status: int, message: str) -> Response:
    if wants_json(request):
        return Response(data.plain_json({"error": message}), status_code=status, media_type="application/json")
    page = server.templates.get_template("error.html").render(title="Error", message=message, status=status)
    return HTMLResponse(page, status_code=status)


def handled(server: Server, handler):
    def endpoint(request: Request) -> Response:
        try:
            return handler(server, request)
        except ArchiveBusyError as exc:
            response = _failure(server, request, 503, str(exc))
            response.headers["retry-after"] = "1"
            return response
        except NotFoundError as exc:
            return _failure(server, request, 404, str(exc))
        except ArchiverError as exc:
            hint = f"{exc.option}: " if isinstance(exc, UsageError) and exc.option else ""
            return _failure(server, request, 400, hint + str(exc))

    return endpoint


class Guard:
    """ASGI middleware: the security headers on every answer, and the token checked on every request
    (`Authorization: Bearer TOKEN`, or the cookie set when a page is first opened with `?token=TOKEN`)."""

    server: Server  # what the application serves (set by `create_app`)

    def __init__(self, app, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in HEADERS]
                message["headers"] = headers + [(k.encode(), v.encode()) for k, v in HEADERS.items()]
            await send(message)

        request = Request(scope)
        if request.method not in ("GET", "HEAD"):
            response = Response("read-only: only GET and HEAD\n", status_code=405, headers={"allow": "GET, HEAD"})
            await response(scope, receive, send_with_headers)
            return
        if self.token is not None:
            response = self._refusal(request)
            if response is not None:
                await response(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, request: Request) -> Response | None:
        """None when the request carries the token; else a 401, or, for `?token=` that matches, a redirect
        that sets the cookie and drops the token from the address."""
        given = request.query_params.get("token")
        if given is not None and _same(given, self.token):
            target = _on_this_site(request.url.path) + _query(request, drop=("token",))
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
            return response
        header = request.headers.get("authorization", "")
        bearer = header[7:] if header.lower().startswith("bearer ") else None
        if (bearer is not None and _same(bearer, self.token)) or _same(request.cookies.get(COOKIE), self.token):
            return None
        return Response(
            "a token is required: Authorization: Bearer TOKEN, or open a page once with ?token=TOKEN\n",
            status_code=401,
            headers={"www-authenticate": "Bearer"},
        )


def _on_this_site(path: str) -> str:
    """`path` as an address on this server: `//host/x` (and `/\\host/x`, which browsers read alike)
    would name another site."""
    return "/" + path.lstrip("/\\")


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


@cache
def _css() -> bytes:
    """The `show` page's rules (`archiver.render.html.STYLE`), then the serve pages' own (static/serve.css)."""
    return (STYLE + (HERE / "static" / "serve.css").read_text(encoding="utf-8")).encode()


def stylesheet(request: Request) -> Response:
    return Response(_css(), media_type="text/css; charset=utf-8", headers={"cache-control": "max-age=300"})


def create_app(db: str | None = None, token: str | None = None) -> Guard:
    """The application serving the archive `db` (default $ARCHIVER_DB, else ./archive.duckdb); every
    request must carry `token` when one is given."""
    server = Server(db, token)
    pages = [
        ("/", overview),
        ("/index.json", overview),
        ("/search", search),
        ("/search.json", search),
        ("/audit", audit),
        ("/audit.json", audit),
        ("/verify", verify),
        ("/verify.json", verify),
        ("/result/{ident:path}", result),
        ("/download/{file}", downloaded),
        *((f"/{kind}/{{name:path}}", subject) for kind in data.SUBJECTS),
    ]
    routes = [Route(path, handled(server, handler), methods=["GET", "HEAD"]) for path, handler in pages]
    routes.append(Route("/favicon.ico", lambda request: Response(status_code=204)))
    routes.append(Route("/static/serve.css", stylesheet))
    guard = Guard(Starlette(routes=routes), token)
    guard.server = server
    return guard


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    db: str | None,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    log: bool = True,
    limits: Limits | None = None,
) -> None:
    """Serve until interrupted; another host than loopback needs a token (`UsageError` without one). A
    missing archive, or an address it cannot listen on, is refused before serving. Each connection is
    held to `limits` (`connections.Limits`: a deadline per request, a bounded head, a number of
    connections below the file limit)."""
    import uvicorn

    from ..archive import Archive

    token = token or os.environ.get("ARCHIVER_TOKEN") or None
    if not is_loopback(host) and not token:
        raise UsageError(f"serving on {host}, not loopback, needs a token: --token or ARCHIVER_TOKEN", "--host")
    with Archive.open(db, read_only=True) as archive:  # no archive there, or not one: one line now, not per page
        where = archive.location.describe()
    listening = _listen(host, port)
    app = create_app(db, token)
    threading.Thread(target=app.server.warm, name="archiver-serve-warm", daemon=True).start()
    bound = listening.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"archiver serve: {where} read-only at http://{shown}:{bound}/ (Ctrl-C stops)", flush=True)
    config = uvicorn.Config(
        app, log_level="info" if log else "warning", http=bounded_protocol(limits or Limits()), backlog=ACCEPT_BURST
    )
    server = uvicorn.Server(config)
    server.run(sockets=[listening])


def _listen(host: str, port: int):
    """A socket listening on `host`:`port`; one the user cannot have is a usage error naming why."""
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family, backlog=ACCEPT_BURST)
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise UsageError(f"cannot listen on {host}:{port}: {why}", "--port") from None
