"""Every address a page links to, built here: a subject's page, a page's JSON twin, a list with its
query string changed (a filter added, a page turned, a column sorted)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request

TWIN = ".json"
"""What a page's address ends with to ask for its JSON twin (the overview's: /index.json)."""


def href(kind: str, name: Any, **query: Any) -> str:
    """The page of one study, period, column, table, agent or result: `/column/s14r5`."""
    return f"/{kind}/{quote(str(name), safe='')}" + encoded(query)


def encoded(query: dict | list) -> str:
    """`?a=1&b=2`, empty values left out; "" when nothing is left."""
    items = query.items() if isinstance(query, dict) else query
    kept = [(k, v) for k, v in items if v is not None and v != ""]
    return "?" + urlencode(kept, doseq=True) if kept else ""


def twin(path: str, query: str = "") -> str:
    """The JSON twin of the page at `path` (with its query string)."""
    return ("/index" if path == "/" else path) + TWIN + (f"?{query}" if query else "")


def changed(request, drop: tuple[str, ...] = (), path: str | None = None, **replace: Any) -> str:
    """The request's own address (or `path` with its query string) with the parameters in `drop` and
    `replace` removed, then those of `replace` that are not None set (a list: the parameter repeated)."""
    items = [(k, v) for k, v in request.query_params.multi_items() if k not in drop and k not in replace and v != ""]
    for key, value in replace.items():
        if isinstance(value, (list, tuple)):
            items += [(key, v) for v in value]
        elif value is not None:
            items.append((key, value))
    return (request.url.path if path is None else path) + encoded(items)


def as_twin(address: str) -> str:
    """A page's address (with its query string) as its JSON twin's; a twin's stays as it is."""
    path, _, query = address.partition("?")
    return address if path.endswith(TWIN) else twin(path, query)


def day_query(day: str, **more: str) -> dict:
    """The filters of one day (a bare date as `until` includes that day) and more."""
    return {"since": day, "until": day, **{k: v for k, v in more.items() if v}}


def wanted(request: Request) -> str:
    """The renderer a request asks for."""
    if request.url.path.endswith(TWIN):
        return "json"
    accept = request.headers.get("accept", "")
    return "json" if "application/json" in accept and "text/html" not in accept else "html"
