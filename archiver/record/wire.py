"""What the proxy reads of the HTTP traffic it forwards: which headers pass, which are recorded, which A2A
binding and protocol version an exchange is, and where one SSE event ends."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    }
)
"""Headers of one hop that a proxy never forwards (RFC 9110 7.6.1), and Host, which names the upstream."""


def forwarded(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers passed on to the next hop, in their order, without the hop-by-hop ones."""
    named = {name.strip().lower() for value in _values(headers, b"connection") for name in value.split(b",")}
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def _values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    return [v for k, v in headers if k.lower() == name]


def recorded_headers(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers a spool keeps: content-type and the A2A-* ones, never credentials."""
    kept: dict[str, str] = {}
    for key, value in headers:
        name = key.decode("latin-1").lower()
        if name == "content-type" or name.startswith("a2a-"):
            kept[name] = value.decode("latin-1")
    return kept


def header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    found = _values(headers, name)
    return found[0] if found else None


_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json", "/agent/authenticatedExtendedCard")
_PUSH = re.compile(r"push[-_]?notification[-_]?config", re.IGNORECASE)
_REST = re.compile(r"/(v1/)?(message:(send|stream)|tasks\b|extendedAgentCard|card\b)")


JSON_BINDINGS = ("jsonrpc", "rest", "card", "push-config")
"""The bindings whose bodies are JSON in A2A: one that is not is reported, not passed by in silence."""


def binding_of(path: str, request: object) -> str:
    """jsonrpc, rest, card, push-config or other: by path, and by the JSON-RPC method of the request body."""
    method = request.get("method") if isinstance(request, dict) and "jsonrpc" in request else None
    if path.endswith(_CARD_PATHS) or method in ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"):
        return "card"
    if _PUSH.search(path) or (isinstance(method, str) and _PUSH.search(method)):
        return "push-config"
    if isinstance(request, dict) and "jsonrpc" in request:
        return "jsonrpc"
    if _REST.search(path) or path.endswith("/extendedAgentCard"):
        return "rest"
    return "other"


def protocol_of(path: str, request: object, version_header: bytes | None) -> str | None:
    """ "1.0" or "0.3": the A2A-Version header when sent, else the JSON-RPC method's style ("message/send" is
    v0.3, "SendMessage" v1.0), else a REST path under /v1/ (v0.3); None when nothing tells."""
    if version_header:
        text = version_header.decode("latin-1").strip()
        return "0.3" if text.startswith("0.") else "1.0" if text.startswith("1.") else text
    method = request.get("method") if isinstance(request, dict) else None
    if isinstance(method, str) and method:
        return "0.3" if "/" in method else "1.0"
    if "/v1/" in path:
        return "0.3"
    return None


_LINE_END = re.compile(rb"\r\n?|\n")


class EventSplitter:
    """Cuts an SSE byte stream into its events: each event is its lines that are not comments, each ended by a
    newline, then one blank line. Comments and keep-alives (blocks of comments only) are left out.

    Each byte is looked at once, whatever the lines' lengths: an unfinished line grows in place as chunks
    arrive (a 32 MiB line costs what its bytes cost, not their square). An event longer than `cap` bytes is
    left out (`oversized` counts them), and a line is held only up to `cap`, so memory stays bounded."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.line = bytearray()  # the unfinished line, while its event is within the cap
        self.line_length = 0  # its bytes, kept or not
        self.comment = False  # the unfinished line is a comment: its bytes are not kept
        self.after_cr = False  # the last chunk ended in CR: a LF starting the next one belongs to it
        self.lines: list[bytes] = []
        self.size = 0
        self.too_big = False
        self.oversized = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        start = 1 if self.after_cr and chunk[:1] == b"\n" else 0
        self.after_cr = False
        events = []
        for end in _LINE_END.finditer(chunk, start):
            self._grow(chunk, start, end.start())
            event = self._line_ended()
            if event is not None:
                events.append(event)
            start = end.end()
            self.after_cr = end.group() == b"\r" and start == len(chunk)
        self._grow(chunk, start, len(chunk))
        return events

    def _grow(self, chunk: bytes, start: int, end: int) -> None:
        """Add `chunk[start:end]` to the unfinished line, unless it is a comment or its event is past the cap."""
        if start == end:
            return
        if self.line_length == 0 and chunk[start] == 0x3A:  # ":"
            self.comment = True
        self.line_length += end - start
        if not self.comment:
            self._count(end - start)
            if not self.too_big:
                self.line += memoryview(chunk)[start:end]

    def _count(self, size: int) -> None:
        self.size += size
        if self.size > self.cap and not self.too_big:
            self.too_big, self.lines = True, []
            self.line.clear()

    def _line_ended(self) -> bytes | None:
        if self.line_length == 0:
            return self._end()
        if not self.comment:
            self._count(1)
            if not self.too_big:
                self.lines.append(bytes(self.line))
        self.line.clear()
        self.line_length, self.comment = 0, False
        return None

    def _end(self) -> bytes | None:
        lines, too_big = self.lines, self.too_big
        self.lines, self.size, self.too_big = [], 0, False
        if too_big:
            self.oversized += 1
            return None
        return b"".join(line + b"\n" for line in lines) + b"\n" if lines else None


def event_data(event: bytes) -> bytes:
    """The data of one SSE event (its `data:` lines joined by newlines)."""
    data = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
    return b"\n".join(data)


DECODED_ENCODINGS = ("gzip", "x-gzip", "deflate")
"""The Content-Encodings the proxy decodes for the index (zlib, in the standard library). Brotli (`br`) and
zstd are not decoded: no library for them is a dependency; such bodies are kept as their bytes and counted."""

_PIECE = 2**20
"""Most decoded bytes one step of a decoder gives at once, so that a small compressed chunk never becomes a
large buffer."""


RATIO_FLOOR = _PIECE
"""Decoded bytes of a stream below which its expansion is not judged: the first piece of a small stream may
expand more than its whole does."""


class UndecodableError(ValueError):
    """A body in a Content-Encoding the proxy does not decode, or whose encoded bytes are damaged."""


class PastBoundError(UndecodableError):
    """A compressed stream that decodes past the proxy's bound on its size or on its expansion."""


@dataclass(frozen=True)
class DecodeBound:
    """How far the proxy decodes a compressed stream to read its events: at most `max_bytes` decoded bytes,
    and at most `ratio` times the compressed bytes read so far once past `RATIO_FLOOR` (a gzip bomb)."""

    max_bytes: int
    ratio: int

    def check(self, encoding: str, produced: int, consumed: int) -> None:
        if produced > self.max_bytes:
            raise PastBoundError(
                f"it decodes ({encoding}) to more than the {self.max_bytes} bytes inspected of a stream "
                "(--decode-max-bytes); the events after them are not recorded"
            )
        if produced > RATIO_FLOOR and produced > self.ratio * consumed:
            raise PastBoundError(
                f"it expands {produced // max(consumed, 1)}-fold ({produced} bytes from {consumed} {encoding}), "
                f"past the ratio of {self.ratio} (ARCHIVER_GZIP_RATIO); the events after them are not recorded"
            )


class BodyDecoder:
    """Decodes one body's Content-Encoding (gzip or deflate) as its chunks arrive, in bounded pieces; with a
    `bound`, `PastBoundError` once the decoded bytes pass it (the piece past it is not given)."""

    def __init__(self, encoding: str, bound: DecodeBound | None = None) -> None:
        if encoding not in DECODED_ENCODINGS:
            raise UndecodableError(f"Content-Encoding {encoding!r} is not decoded (only gzip and deflate are)")
        self.encoding, self.bound = encoding, bound
        self.inflate = zlib.decompressobj(31) if encoding != "deflate" else None
        self.consumed = self.produced = 0  # compressed bytes read, decoded bytes given

    def feed(self, chunk: bytes):
        """The decoded bytes of `chunk`, in pieces of at most 1 MiB."""
        if self.inflate is None:  # deflate: zlib-wrapped as RFC 9110 says, or raw as some servers send it
            self.inflate = zlib.decompressobj(15 if _zlib_header(chunk) else -15)
        data = chunk
        try:
            while data:
                piece = self.inflate.decompress(data, _PIECE)
                self.consumed += len(data) - len(self.inflate.unconsumed_tail)
                data = self.inflate.unconsumed_tail
                if piece:
                    self.produced += len(piece)
                    if self.bound is not None:
                        self.bound.check(self.encoding, self.produced, self.consumed)
                    yield piece
        except zlib.error as exc:
            raise UndecodableError(f"its {self.encoding} bytes are damaged ({exc})") from exc


def _zlib_header(head: bytes) -> bool:
    return len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


def encoding_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """A body's Content-Encoding, lowercased (None for none or `identity`)."""
    value = header(headers, b"content-encoding")
    text = value.decode("latin-1").strip().lower() if value else ""
    return text if text and text != "identity" else None


def decoded(body: bytes, encoding: str, limit: int) -> bytes:
    """A whole body decoded; `UndecodableError` when it cannot be, or when it decodes to more than `limit` bytes."""
    decoder, pieces, size = BodyDecoder(encoding), [], 0
    for piece in decoder.feed(body):
        size += len(piece)
        if size > limit:
            raise UndecodableError(f"it decodes ({encoding}) to more than the {limit} bytes recorded of a body")
        pieces.append(piece)
    if not decoder.inflate.eof:
        raise UndecodableError(f"its {encoding} bytes end before the body does")
    return b"".join(pieces)
