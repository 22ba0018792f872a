"""ASGI middleware around every answer: the `Host` it is asked by, read-only methods, the origin of what has
effects, the token, the security headers."""

from __future__ import annotations

import hmac
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .connections import CONNECTION
from .headers import HEADERS
from .urls import changed

COOKIE = "archiver_token"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
"""The names a server bound to loopback answers to (and the Python API's `create_app` by default)."""
_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]{1,253}))(?::[0-9]{1,5})?")
_WILDCARDS = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class Hosts:
    """The names a request's `Host` (and the `Origin` of a request with effects) may give: those the server
    was bound to, `localhost`, and those allowed for a reverse proxy (`--allow-host`). A server bound to
    every address (0.0.0.0, ::) also answers to any address literal (no DNS name can be rebound to one)
    and to the machine's own names. Any other name is what DNS rebinding looks like: refused."""

    names: frozenset[str]
    any_address: bool = False

    @classmethod
    def bound(cls, host: str, address: str | None = None, allowed: Iterable[str] = ()) -> Hosts:
        """For a server listening on `host` (as given; `address`, the socket's own) with `allowed` names."""
        given = [_bare(host), _bare(address or ""), "localhost", *(_bare(name) for name in allowed)]
        every = _bare(host) in _WILDCARDS
        if every:
            given += [_bare(socket.gethostname()), _bare(socket.getfqdn())]
        elif _is_loopback(_bare(host)):
            given += list(LOOPBACK)
        return cls(frozenset(name for name in given if name and name not in _WILDCARDS), every)

    def allows(self, host: str | None) -> bool | None:
        """Whether `host` (a `Host` header's value: name or address, and a port) is one of these names;
        None when it is no host name at all (empty, malformed)."""
        found = _HOST.fullmatch(host.strip()) if host else None
        if found is None:
            return None
        name = _bare(found["v6"] or found["name"])
        return name in self.names or (self.any_address and _is_address(name))


def _bare(name: str) -> str:
    return name.strip().strip("[]").rstrip(".").lower()


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    return name == "localhost" or (_is_address(name) and ipaddress.ip_address(name).is_loopback)


class Guard:
    """The security headers on every answer; the `Host` checked on every request (421 for a name the server
    does not answer to, 400 for none); an `Origin` of another site refused (403) on a request with effects
    (any method but GET and HEAD, and the token's exchange for its cookie); and the token checked on every
    request (`Authorization: Bearer TOKEN`, or the cookie set when a page is first opened with `?token=TOKEN`)."""

    server = None  # what the application serves (set by `create_app`)

    def __init__(self, app, token: str | None, hosts: Hosts) -> None:
        self.app, self.token, self.hosts = app, token, hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        connection = scope.get("extensions", {}).get(CONNECTION)  # under `serve`: its send buffers are bounded

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in HEADERS]
                message["headers"] = headers + [(k.encode(), v.encode()) for k, v in HEADERS.items()]
            elif message["type"] == "http.response.body" and connection is not None:
                await connection.send_body(send, message)
                return
            await send(message)

        request = Request(scope)
        response = self._misdirected(request) or self._cross_site(request) or self._unsafe(request)
        if response is None and self.token is not None:
            response = self._refusal(request)
        if response is not None:
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def _misdirected(self, request: Request) -> Response | None:
        """A 400 for a request without a host name, a 421 for a name this server does not answer to."""
        allowed = self.hosts.allows(request.headers.get("host"))
        if allowed is None:
            return Response("a request names its host: Host: NAME[:PORT]\n", status_code=400)
        if not allowed:
            return Response(
                "this server does not answer to that host name (a reverse proxy's: archiver serve --allow-host)\n",
                status_code=421,
            )
        return None

    def _cross_site(self, request: Request) -> Response | None:
        """A 403 for a request with effects sent by a page of another site (its `Origin`)."""
        origin = request.headers.get("origin")
        effects = request.method not in ("GET", "HEAD") or "token" in request.query_params
        if origin is None or not effects:
            return None
        netloc = urlsplit(origin).netloc if origin != "null" else ""
        if self.hosts.allows(netloc.rpartition("@")[2]):
            return None
        return Response("a request from another site's page: refused\n", status_code=403)

    @staticmethod
    def _unsafe(request: Request) -> Response | None:
        if request.method in ("GET", "HEAD"):
            return None
        return Response("read-only: only GET and HEAD\n", status_code=405, headers={"allow": "GET, HEAD"})

    def _refusal(self, request: Request) -> Response | None:
        """None when the request carries the token; else a 401, or, for `?token=` that matches, a redirect
        that sets the cookie and drops the token from the address."""
        given = request.query_params.get("token")
        if given is not None and _same(given, self.token):
            target = changed(request, drop=("token",), path=_on_this_site(request.url.path))
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
