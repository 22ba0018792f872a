"""What `archiver serve` allows a client connection: a deadline to send each request, a bound on a request's
head, and a number of connections held below the process's file limit.

uvicorn times out only idle keep-alive connections, and any byte received restarts that timer; a request
whose headers arrive a byte at a time, or never end, holds its socket for ever. So the HTTP protocol is
uvicorn's own (httptools) with these bounds around it:

- every request must have arrived whole (head and body) `request_seconds` after its connection opened or
  the previous answer was sent; else the connection is closed, however many bytes trickle in;
- a request head larger than `HEAD_BYTES` is answered 431 and its connection closed;
- at most `connections` are open; when one more arrives, the oldest connection that is waiting for its
  client (not being answered) is closed to make room, so that slow clients cannot keep a fresh one out;
- the server's own answers to malformed requests carry the same security headers as the application's.
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass, field

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .headers import HEADERS

REQUEST_SECONDS = 10.0
HEAD_BYTES = 64 * 1024
ACCEPT_BURST = 128
"""The listening backlog: at most this many connections are accepted at once, before any is looked at."""
FILES_KEPT = ACCEPT_BURST + 64
"""Files left to the process beside its connections: an accept burst, the archive, its WAL and templates."""


def connections_allowed() -> int:
    """The open connections the file limit leaves room for, `FILES_KEPT` set aside (at least 8)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 65536
    return max(8, soft - FILES_KEPT)


@dataclass
class Limits:
    request_seconds: float = REQUEST_SECONDS
    head_bytes: int = HEAD_BYTES
    connections: int = field(default_factory=connections_allowed)


class BoundedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol held to `limits` (`bounded_protocol` makes one class per server)."""

    limits: Limits
    live: dict[BoundedProtocol, None]  # the open connections, oldest first

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head = 0
        self._deadline: asyncio.TimerHandle | None = None
        while len(self.live) >= self.limits.connections:
            oldest = next((c for c in self.live if c.waiting_for_client()), None)
            if oldest is None:  # every connection is being answered: this one waits for none of them
                transport.close()
                return
            oldest.drop()
        self.live[self] = None
        self._arm()

    def connection_lost(self, exc) -> None:
        self.live.pop(self, None)
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._head += len(data)
            if self._head > self.limits.head_bytes:
                self._refuse(431, "Request Header Fields Too Large", "the request's head is too large")
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._head = 0
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, "Bad Request", msg)

    def waiting_for_client(self) -> bool:
        """Whether the client owes a request (or the rest of its body) and nothing is being answered."""
        return self.cycle is None or self.cycle.response_complete or self.cycle.more_body

    def drop(self) -> None:
        self.live.pop(self, None)
        self._disarm()
        self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.limits.request_seconds, self._expire)

    def _disarm(self) -> None:
        if getattr(self, "_deadline", None) is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.waiting_for_client() and not self.transport.is_closing():
            self.drop()

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """Answer `status` with the security headers and close (the server's own answers included)."""
        body = message.encode("ascii", "replace")
        head = [f"HTTP/1.1 {status} {reason}".encode()]
        head += [name + b": " + value for name, value in self.server_state.default_headers]
        head += [f"{name}: {value}".encode() for name, value in HEADERS.items()]
        head += [b"content-type: text/plain; charset=utf-8", b"content-length: %d" % len(body)]
        head += [b"connection: close"]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.drop()


def bounded_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """The protocol class of one server held to `limits`, counting that server's connections."""
    return type("BoundedProtocol", (BoundedProtocol,), {"limits": limits, "live": {}})
