"""ASGI middleware around every answer: read-only methods, the token, the security headers."""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .headers import HEADERS
from .urls import changed

COOKIE = "archiver_token"


class Guard:
    """The security headers on every answer, and the token checked on every request
    (`Authorization: Bearer TOKEN`, or the cookie set when a page is first opened with `?token=TOKEN`)."""

    server = None  # what the application serves (set by `create_app`)

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
