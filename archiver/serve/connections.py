"""What `archiver serve` allows a client connection: a deadline to send each request, a bound on a request's
head, bounded send buffers, and a number of connections held below the process's file limit.

uvicorn times out only idle keep-alive connections, and any byte received restarts that timer; a request
whose headers arrive a byte at a time, or never end, holds its socket for ever. So the HTTP protocol is
uvicorn's own (httptools) with these bounds around it:

- every request must have arrived whole (head and body) `request_seconds` after its connection opened or
  the previous answer was sent; else the connection is closed, however many bytes trickle in;
- a request head larger than `HEAD_BYTES` is answered 431 and its connection closed;
- at most `connections` are open; when one more arrives, the oldest connection that is waiting for its
  client (not being answered) is closed to make room, so that slow clients cannot keep a fresh one out;
- the server's own answers to malformed requests carry the same security headers as the application's;
- an answer is handed to the connection `SEND_CHUNK` bytes at a time, each once the client has read most of
  the one before (uvicorn's flow control), so a connection's send buffer holds about one chunk, never a
  whole answer again;
- a client that reads nothing of its answer for `send_seconds` is dropped (its connection aborted, its
  buffer discarded), and when the answers not yet read by their clients exceed `send_bytes` together, the
  slowest readers are dropped, the one with the most unread first, until they fit: a slow reader gets its
  share, never the whole server's memory;
- memory freed is given back to the system (`return_memory`), so that what a burst of large answers took
  does not stay with the process after their clients are gone.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import resource
import time
from dataclasses import dataclass, field

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .headers import HEADERS

REQUEST_SECONDS = 10.0
HEAD_BYTES = 64 * 1024
ACCEPT_BURST = 128
"""The listening backlog: at most this many connections are accepted at once, before any is looked at."""
FILES_KEPT = ACCEPT_BURST + 64
"""Files left to the process beside its connections: an accept burst, the archive, its WAL and templates."""
SEND_SECONDS = 10.0
"""Seconds a client may read nothing of its answer before its connection is dropped."""
SEND_BYTES = 64 * 2**20
"""Bytes of answers not yet read by their clients, all connections together, before the slowest are dropped."""
SEND_CHUNK = 64 * 1024
"""Bytes of an answer handed to the connection at a time."""
CONNECTION = "archiver.connection"
"""The scope's key under which the application finds its connection (`BoundedProtocol.send_body`)."""


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
    send_seconds: float = SEND_SECONDS
    send_bytes: int = SEND_BYTES


class BoundedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol held to `limits` (`bounded_protocol` makes one class per server)."""

    limits: Limits
    live: dict[BoundedProtocol, None]  # the open connections, oldest first

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head = 0
        self._deadline: asyncio.TimerHandle | None = None
        self._stalled: asyncio.TimerHandle | None = None
        self.unsent = 0  # bytes of the answer under way not yet handed to the transport
        self.paused_at: float | None = None  # since when the client has not kept up with its answer
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
        self._unstall()
        super().connection_lost(exc)
        _trim_soon(self.loop)

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._head += len(data)
            if self._head > self.limits.head_bytes:
                self._refuse(431, "Request Header Fields Too Large", "the request's head is too large")
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._head = 0
        self.scope.setdefault("extensions", {})[CONNECTION] = self
        super().on_headers_complete()

    def pause_writing(self) -> None:
        """The client has not read what was sent: it has `send_seconds` to start reading again, and the
        answers unread by all clients must fit in `send_bytes`."""
        super().pause_writing()
        if self.paused_at is None:
            self.paused_at = time.monotonic()
            self._stalled = self.loop.call_later(self.limits.send_seconds, self._stall)
        self._within_budget()

    def resume_writing(self) -> None:
        self._unstall()
        super().resume_writing()

    def shutdown(self) -> None:
        """The server stops: a client that is not reading its answer is not waited for."""
        if self.paused_at is not None:
            self.drop(discard=True)
            return
        super().shutdown()

    async def send_body(self, send, message: dict) -> None:
        """Send a body `SEND_CHUNK` bytes at a time, each once the client has read most of the one before
        (`send` waits for that: uvicorn's flow control), the rest counted as unsent meanwhile; stops early
        when the connection is dropped."""
        body, more = message.get("body", b""), message.get("more_body", False)
        if len(body) <= SEND_CHUNK:
            await send(message)
            return
        self.unsent = len(body)
        self._within_budget()
        try:
            for start in range(0, len(body), SEND_CHUNK):
                if self.transport.is_closing():
                    return
                piece = body[start : start + SEND_CHUNK]
                self.unsent -= len(piece)
                last = start + SEND_CHUNK >= len(body)
                await send({"type": "http.response.body", "body": piece, "more_body": more or not last})
        finally:
            self.unsent = 0

    def unread(self) -> int:
        """Bytes of its answer the client has not read: those still to hand over, and the transport's buffer."""
        return self.unsent + (0 if self.transport.is_closing() else self.transport.get_write_buffer_size())

    def _within_budget(self) -> None:
        """Drop the slowest readers (paused, the most unread first) while all unread answers exceed the budget."""
        unread = {connection: connection.unread() for connection in self.live}
        total = sum(unread.values())
        slow = sorted((c for c in unread if c.paused_at is not None), key=lambda c: (-unread[c], c.paused_at))
        for connection in slow:
            if total <= self.limits.send_bytes:
                return
            total -= unread[connection]
            connection.drop(discard=True)

    def _stall(self) -> None:
        self._stalled = None
        if self.paused_at is not None and not self.transport.is_closing():
            self.drop(discard=True)

    def _unstall(self) -> None:
        self.paused_at = None
        if getattr(self, "_stalled", None) is not None:
            self._stalled.cancel()
            self._stalled = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, "Bad Request", msg)

    def waiting_for_client(self) -> bool:
        """Whether the client owes a request (or the rest of its body) and nothing is being answered."""
        return self.cycle is None or self.cycle.response_complete or self.cycle.more_body

    def drop(self, discard: bool = False) -> None:
        """Close the connection; with `discard`, at once, what was not sent thrown away (a client that does
        not read would otherwise keep it open until it did)."""
        self.live.pop(self, None)
        self._disarm()
        self._unstall()
        if discard:
            self.unsent = 0
            self.transport.abort()
        else:
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


TRIM_EVERY = 1.0
"""Seconds at least between two times freed memory is given back to the system."""
_trimming: dict[asyncio.AbstractEventLoop, asyncio.TimerHandle] = {}


def _glibc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _glibc()
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 * 1024


def return_memory() -> None:
    """Have the C allocator give large blocks back as soon as they are freed: a fixed threshold above which
    an allocation is its own mapping (glibc raises it to the largest block freed, after which answers of
    megabytes come from the heap and stay with the process). A no-op without glibc."""
    if _LIBC is not None:
        _LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def _trim_soon(loop: asyncio.AbstractEventLoop) -> None:
    """Give the memory freed by closed connections back to the system, at most every `TRIM_EVERY` seconds."""
    if _LIBC is None or loop in _trimming:
        return

    def trim() -> None:
        _trimming.pop(loop, None)
        _LIBC.malloc_trim(0)

    _trimming[loop] = loop.call_later(TRIM_EVERY, trim)
