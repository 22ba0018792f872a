"""The renderers a page's data is handed to, registered by name: HTML (the page's template) and JSON
(its twin, the data as it is). A request asks for JSON with `.json` at the end of its path, or an
`Accept` of JSON without HTML; a search's whole list as a file is `downloads`'."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..render.jsontext import plain
from .pages import Shown
from .urls import twin, wanted


def as_json(server, request: Request, shown: Shown, status: int = 200) -> Response:
    return Response(plain(shown.twin), status_code=status, media_type="application/json")


def as_html(server, request: Request, shown: Shown, status: int = 200) -> Response:
    query = request.url.query
    page = server.templates.get_template(shown.template).render(
        request=request,
        title=shown.title,
        twin=shown.twin,
        json_href=twin(request.url.path, query) if shown.linked else None,
        **shown.context,
    )
    return HTMLResponse(page, status_code=status)


RENDERERS: dict[str, Callable[..., Response]] = {"html": as_html, "json": as_json}


COLUMNS_KEPT = 365 * 24 * 3600
"""Seconds a list keeps its chosen columns (a cookie per list)."""


def respond(server, request: Request, shown: Shown, status: int = 200) -> Response:
    response = RENDERERS[wanted(request)](server, request, shown, status)
    for name, value in shown.cookies.items():
        response.set_cookie(name, value, max_age=COLUMNS_KEPT if value else 0, httponly=True, samesite="strict")
    return response
