"""The recording proxy: an ASGI application forwarding every request to the upstream agent and every
response back, byte for byte and as it arrives, handing a copy of each to the background thread.

The upstream is reached with aiohttp's client: it takes about a quarter of the CPU per request that httpx
does (195 against 712 microseconds measured on loopback), which a proxy pays on every call."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp
import orjson
from multidict import CIMultiDict
from yarl import URL

from ..read.containers import GZIP_RATIO, RECORD_LIMIT
from ..redact import redacted_query
from . import CONNECT_TIMEOUT, DECODE_MAX_BYTES, READ_TIMEOUT, RECORD_MAX_BYTES
from .metrics import RecordMetrics
from .segments import envelope, stream_end, timestamp
from .wire import (
    JSON_BINDINGS,
    BodyDecoder,
    DecodeBound,
    EventSplitter,
    PastBoundError,
    UndecodableError,
    binding_of,
    decoded,
    encoding_of,
    forwarded,
    header,
    protocol_of,
    recorded_headers,
)

log = logging.getLogger("archiver.record")


@dataclass(frozen=True)
class ProxySettings:
    upstream: str
    proxy_id: str
    record_max_bytes: int = RECORD_MAX_BYTES
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float | None = READ_TIMEOUT
    rewrite_card: str | None = None
    """The proxy's public URL: the agent card's URLs are rewritten to it (only when given)."""
    durable: bool = False
    """Each completed exchange is written and fsynced before the last byte of its response reaches the client."""
    decode_max_bytes: int = DECODE_MAX_BYTES
    """The most decoded bytes of one compressed stream read for its events (also bounded by `GZIP_RATIO`)."""
    authorization: str | None = field(default=None, repr=False)
    """Sent to the upstream as `Authorization` when the client sends none (never recorded)."""


CARD_REWRITE_MAX_BYTES = 8 * 2**20
"""The largest agent card `--rewrite-card` rewrites: it must hold the card whole to rewrite it, so a larger
one is refused (502), counted and logged. A card that need not be rewritten (not a 200, or encoded) is
streamed as any body."""


class RecordingProxy:
    """The ASGI application. `/-/health` and `/-/metrics` are the proxy's own; every other path is the
    agent's."""

    def __init__(self, settings: ProxySettings, background, metrics: RecordMetrics) -> None:
        self.settings, self.background, self.metrics = settings, background, metrics
        self.upstream = settings.upstream.rstrip("/")
        self.client: aiohttp.ClientSession | None = None
        self.connections: OrderedDict = OrderedDict()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            if scope["path"] == "/-/health":
                await _reply(send, 200, orjson.dumps(self.metrics.health()), b"application/json")
            elif scope["path"] == "/-/metrics":
                await _reply(send, 200, self.metrics.text(), b"text/plain; version=0.0.4; charset=utf-8")
            else:
                await Exchange(self, scope, receive, send).run()

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.background.start()
                self.open()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await asyncio.to_thread(self.background.stop)
                await send({"type": "lifespan.shutdown.complete"})
                return

    def open(self) -> None:
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.settings.connect_timeout, sock_read=self.settings.read_timeout
        )
        self.client = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, keepalive_timeout=KEEPALIVE_SECONDS),
            timeout=timeout,
            auto_decompress=False,  # bodies pass as they were encoded
            skip_auto_headers=_NOT_ADDED,
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()

    def connection(self, scope) -> str:
        """An id for the client's TCP connection (by its address; the latest 65536 are remembered)."""
        client = tuple(scope.get("client") or ("", 0))
        known = self.connections.get(client)
        if known is None:
            known = self.connections[client] = uuid.uuid4().hex[:16]
            if len(self.connections) > 65536:
                self.connections.popitem(last=False)
        return known


KEEPALIVE_SECONDS = 4.0
"""How long an idle connection to the upstream is kept for the next request: less than the 5 s after which
common servers (uvicorn, Node's http) close one, so that the proxy seldom sends a request on a connection the
upstream is closing."""

_NOT_ADDED = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
"""Headers aiohttp would add to a request the client sent without them: the proxy adds none."""


class UpstreamBroken(Exception):  # noqa: N818 - the upstream's own failure, as the client sees it
    """The upstream failed while its response was being read (after it had begun)."""


async def _reply(send, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ClientGone(Exception):  # noqa: N818 - the client's own word for it
    """The client disconnected before the exchange ended."""


class Exchange:
    """One request and its response, forwarded, and recorded once it ends."""

    def __init__(self, proxy: RecordingProxy, scope, receive, send) -> None:
        self.proxy, self.scope, self.receive, self.send = proxy, scope, receive, send
        self.cap = proxy.settings.record_max_bytes
        self.id = uuid.uuid4().hex
        self.time = timestamp()
        self.request_body: list[bytes] = []
        self.request_size = 0
        self.request_done = False

    async def run(self) -> None:
        response = await self._ask()
        if response is None:
            return
        try:
            await self._respond(response)
        except UpstreamBroken as exc:
            self.proxy.metrics.upstream_failed("stream-broken", f"the upstream agent broke off a response ({exc})")
        except OSError:  # the client left before the response was sent whole: nothing to record
            log.debug("archiver record: the client left %s %s before its response ended", self.scope["method"],
                      self.scope["path"])  # fmt: skip
        finally:
            if response.content.is_eof():
                response.release()  # the connection serves the next request
            else:
                response.close()  # unread: the upstream's connection (and stream) is closed

    async def _ask(self) -> aiohttp.ClientResponse | None:
        """The upstream's response (its body still to read); None when there is none to forward (the client
        left, or the upstream failed: then the client was told, with a 502 or 504)."""
        scope, upstream = self.scope, self.proxy.upstream
        headers = with_credential(forwarded(scope["headers"]), self.proxy.settings.authorization)
        url = upstream + (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode("latin-1")
        try:
            content = await self._content()
            if content == b"" and not any(k.lower() in (b"content-length", b"transfer-encoding") for k, _ in headers):
                content = None  # no body: none is sent, nor a Content-Length
            response = await self.proxy.client.request(
                scope["method"], URL(url, encoded=True), headers=_multidict(headers), data=content,
                allow_redirects=False, auto_decompress=False,
            )  # fmt: skip
        except ClientGone:
            return None
        except TimeoutError as exc:
            await self._refuse(504, "timeout", f"the upstream agent at {upstream} did not answer in time", exc)
        except aiohttp.ClientConnectorError as exc:
            await self._refuse(502, "unreachable", f"the upstream agent at {upstream} is unreachable", exc)
        except aiohttp.ClientError as exc:
            text = f"the upstream agent at {upstream} failed to answer ({type(exc).__name__})"
            await self._refuse(502, "failed", text, exc)
        else:
            if 100 <= response.status <= 599:
                return response
            response.close()
            text = f"the upstream agent at {upstream} answered with status {response.status}, outside HTTP's 100 to 599"
            await self._refuse(502, "bad-status", text)
        return None

    async def _content(self):
        """The request body: bytes when it came in one piece, else an iterator streaming it upstream."""
        message = await self.receive()
        if message["type"] == "http.disconnect":
            raise_gone()
        body = message.get("body", b"")
        self._keep_request(body)
        if not message.get("more_body"):
            self.request_done = True
            return body
        return self._more(body)

    async def _more(self, first: bytes):
        yield first
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise_gone()
            body = message.get("body", b"")
            self._keep_request(body)
            if body:
                yield body
            if not message.get("more_body"):
                self.request_done = True
                return

    def _keep_request(self, body: bytes) -> None:
        self.request_size += len(body)
        if self.request_size <= self.cap:
            self.request_body.append(body)
        else:
            self.request_body = []

    async def _refuse(self, status: int, reason: str, text: str, exc: Exception | None = None) -> None:
        self.proxy.metrics.upstream_failed(reason, f"{text} ({type(exc).__name__})" if exc else text)
        body = orjson.dumps({"error": {"code": status, "message": f"archiver record: {text}"}})
        with contextlib.suppress(OSError):
            await _reply(self.send, status, body, b"application/json")

    def envelope(self, kind: str, response: aiohttp.ClientResponse) -> dict:
        """The envelope fields an exchange and a stream-open share (the spool contract, docs/record.md)."""
        request = recorded_body(self.request_body, self.request_size, self.cap, encoding_of(self.scope["headers"]))
        path = self.scope["path"]
        found = envelope(
            kind,
            proxy=self.proxy.settings.proxy_id,
            upstream=self.proxy.upstream,
            connection=self.proxy.connection(self.scope),
            exchange=self.id,
            time=self.time,
            method=self.scope["method"],
            path=path,
            query=redacted_query(self.scope["query_string"].decode("latin-1")),
            binding=binding_of(path, request.value),
            protocol=protocol_of(path, request.value, header(self.scope["headers"], b"a2a-version")),
            status=response.status,
            request_headers=recorded_headers(self.scope["headers"]),
            response_headers=recorded_headers(response.raw_headers),
        )
        self._add_body(found, "request", request)
        return found

    def _add_body(self, envelope: dict, key: str, body: RecordedBody) -> None:
        """The body's fields in the envelope; one the index will not read is counted and logged."""
        body.add_to(envelope, key)
        if body.problem is not None and envelope["binding"] in JSON_BINDINGS:
            reason, why = body.problem
            what = f"the {key} body of {self.scope['method']} {self.scope['path']}"
            self.proxy.metrics.unreadable_body(reason, f"{what} is recorded only as its bytes: {why}")

    async def _respond(self, response: aiohttp.ClientResponse) -> None:
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            await Stream(self, response).run()
            return
        headers = forwarded(list(response.raw_headers))
        if self._card_to_rewrite(response):
            await self._rewritten_card(response, headers)
            return
        await self.send({"type": "http.response.start", "status": response.status, "headers": headers})
        body = OutgoingBody(self.send, self.proxy.settings.durable, None)
        kept, size = [], 0
        async for chunk in chunks(response):
            size += len(chunk)
            if size <= self.cap:
                kept.append(chunk)
            elif kept:
                kept = []
            await body.chunk(chunk)
        await self.record(response, kept, size)
        await body.end()

    async def record(self, response: aiohttp.ClientResponse, kept: list[bytes], size: int) -> None:
        """Hand the exchange to the spool writer (and, in durable mode, wait until it is written and fsynced)."""
        envelope = self.envelope("exchange", response)
        envelope["time_end"] = timestamp()
        self._add_body(envelope, "response", recorded_body(kept, size, self.cap, encoding_of(response.raw_headers)))
        self.proxy.metrics.requests.labels(envelope["binding"]).inc()
        await self.keep(("exchange", envelope), self.request_size + size)

    async def keep(self, item: tuple, size: int) -> None:
        """Queue a record; in durable mode, return once it is written and fsynced (or could not be)."""
        if not self.proxy.settings.durable:
            self.proxy.background.put(item, size)
            return
        loop = asyncio.get_running_loop()
        synced = loop.create_future()
        if self.proxy.background.put(item, size, lambda: loop.call_soon_threadsafe(_settle, synced)):
            await synced

    def _card_to_rewrite(self, response: aiohttp.ClientResponse) -> bool:
        """Whether `--rewrite-card` must rewrite this answer: a card's 200, not encoded (else it streams)."""
        return bool(
            self.proxy.settings.rewrite_card
            and _card_path(self.scope["path"])
            and response.status == 200
            and encoding_of(response.raw_headers) is None
        )

    async def _rewritten_card(self, response: aiohttp.ClientResponse, headers: list) -> None:
        body = await self._whole_card(response)
        if body is None:
            return
        shown = body
        with contextlib.suppress(orjson.JSONDecodeError):
            card = orjson.loads(body)
            if isinstance(card, dict):
                shown = orjson.dumps(rewrite_card(card, self.proxy.upstream, self.proxy.settings.rewrite_card))
        headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(shown)).encode()))
        await self.send({"type": "http.response.start", "status": response.status, "headers": headers})
        await self.record(response, [body], len(body))
        await self.send({"type": "http.response.body", "body": shown})

    async def _whole_card(self, response: aiohttp.ClientResponse) -> bytes | None:
        """The card's bytes, read whole up to `CARD_REWRITE_MAX_BYTES`; None when it is larger (the client was
        answered with a 502 saying so)."""
        limit = CARD_REWRITE_MAX_BYTES
        kept, size = [], response.content_length or 0
        if size <= limit:
            size = 0
            async for chunk in chunks(response):
                size += len(chunk)
                if size > limit:
                    break
                kept.append(chunk)
        if size <= limit:
            return b"".join(kept)
        text = (f"the agent card at {self.scope['path']} is larger than the {limit} bytes --rewrite-card "
                f"rewrites; it was not forwarded (serve it without --rewrite-card, or make it smaller)")  # fmt: skip
        await self._refuse(502, "card-too-large", text)
        return None


def raise_gone() -> None:
    raise ClientGone


async def chunks(response: aiohttp.ClientResponse):
    """The response body's chunks as they arrive; `UpstreamBroken` when the upstream fails meanwhile."""
    body = response.content.iter_any()
    while True:
        try:
            chunk = await anext(body)
        except StopAsyncIteration:
            return
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamBroken(str(exc)) from exc
        yield chunk


def with_credential(headers: list[tuple[bytes, bytes]], authorization: str | None) -> list[tuple[bytes, bytes]]:
    """`headers` with the proxy's `Authorization` for the upstream, unless the client sent its own."""
    if authorization is None or any(k.lower() == b"authorization" for k, _ in headers):
        return headers
    return [*headers, (b"authorization", authorization.encode("latin-1"))]


def _multidict(headers: list[tuple[bytes, bytes]]) -> CIMultiDict:
    return CIMultiDict((k.decode("latin-1"), v.decode("latin-1")) for k, v in headers)


_CARD_SUFFIXES = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def _card_path(path: str) -> bool:
    return path.endswith(_CARD_SUFFIXES)


def rewrite_card(card: dict, upstream: str, public: str) -> dict:
    """The card with its URLs (`url`, and those of `supportedInterfaces` and `additionalInterfaces`) on the
    upstream's origin moved to `public`, the proxy's URL."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(upstream))
    public = public.rstrip("/")

    def moved(url):
        return public + url[len(origin) :] if isinstance(url, str) and url.startswith(origin) else url

    card = dict(card)
    if "url" in card:
        card["url"] = moved(card["url"])
    for key in ("supportedInterfaces", "supported_interfaces", "additionalInterfaces"):
        if isinstance(card.get(key), list):
            card[key] = [
                {**item, "url": moved(item.get("url"))} if isinstance(item, dict) and "url" in item else item
                for item in card[key]
            ]
    return card


def _settle(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


class OutgoingBody:
    """A response's body on its way to the client. In durable mode the bytes that complete it wait for
    `end()`, which the caller awaits once the exchange is recorded: every chunk but the last of a unary
    answer (`length` None), the chunk that reaches a stream's Content-Length; a body without a length is
    complete only with its closing empty message."""

    def __init__(self, send, durable: bool, length: int | None, unary: bool = True) -> None:
        self.send, self.durable, self.length, self.unary = send, durable, length, unary
        self.sent = 0
        self.held = b""

    async def chunk(self, data: bytes) -> None:
        self.sent += len(data)
        if self.durable and self.unary:
            data, self.held = self.held, data  # the previous chunk goes; this one may be the last
        elif self.durable and self.length is not None and self.sent >= self.length:
            data, self.held = b"", self.held + data
        if data:
            await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self) -> None:
        await self.send({"type": "http.response.body", "body": self.held})


@dataclass
class RecordedBody:
    """A body as the spool keeps it (the spool contract, docs/record.md)."""

    value: object = None  # its JSON (decoded from its Content-Encoding), or None
    raw: bytes | None = None  # its exact bytes, when `value` is not them
    encoding: str | None = None  # the Content-Encoding decoded to read `value`
    problem: tuple[str, str] | None = None  # why the index reads nothing of it: (not-json | encoding, detail)
    truncated: bool = False  # over the cap: neither kept nor read

    def add_to(self, envelope: dict, key: str) -> None:
        envelope[key] = self.value
        if self.raw:
            envelope[f"{key}_base64"] = base64.b64encode(self.raw).decode()
        if self.encoding:
            envelope[f"{key}_encoding"] = self.encoding
        if self.problem:
            envelope[f"{key}_unreadable"] = self.problem[1]
        if self.truncated:
            envelope[f"{key}_truncated"] = True


def recorded_body(chunks: list[bytes], size: int, cap: int, encoding: str | None) -> RecordedBody:
    """The body's JSON, decoded from gzip or deflate when so encoded; its bytes kept when they are not its
    JSON as they are, with the reason the index cannot read it when it is no JSON at all."""
    if size > cap:
        return RecordedBody(truncated=True)
    if size == 0:
        return RecordedBody()
    raw = b"".join(chunks)
    text = raw
    if encoding is not None:
        try:
            text = decoded(raw, encoding, cap)
        except UndecodableError as exc:
            return RecordedBody(raw=raw, problem=("encoding", str(exc)))
    try:
        return RecordedBody(orjson.loads(text), raw if encoding else None, encoding)
    except orjson.JSONDecodeError as exc:
        after = f" once decoded ({encoding})" if encoding else ""
        return RecordedBody(raw=raw, encoding=encoding, problem=("not-json", f"it is not JSON{after}: {exc}"))


class Stream:
    """An SSE response: forwarded chunk by chunk as it arrives; each event recorded as it ends (read through
    its Content-Encoding when gzip or deflate)."""

    def __init__(self, exchange: Exchange, response: aiohttp.ClientResponse) -> None:
        self.exchange, self.response = exchange, response
        self.splitter = EventSplitter(min(exchange.cap, RECORD_LIMIT))
        self.encoding = encoding_of(response.raw_headers)
        self.decoder: BodyDecoder | None = None
        self.unreadable: str | None = None  # why its events are not recorded (an encoding not decoded)
        if self.encoding is not None:
            try:
                bound = DecodeBound(exchange.proxy.settings.decode_max_bytes, GZIP_RATIO)
                self.decoder = BodyDecoder(self.encoding, bound)
            except UndecodableError as exc:
                self.unreadable = str(exc)
        self.events = 0
        self.end = "complete"
        self.forwarded_all = False  # every chunk of the upstream's body was received and sent on
        self.ended = False  # its stream-end was handed to the writer

    async def run(self) -> None:
        exchange, response = self.exchange, self.response
        proxy = exchange.proxy
        opening = exchange.envelope("stream-open", response)
        if self.decoder is not None:
            opening["response_encoding"] = self.encoding
        proxy.metrics.requests.labels(opening["binding"]).inc()
        proxy.background.put(("stream_open", opening), exchange.request_size)
        if self.unreadable:
            self._not_split(self.unreadable)
        proxy.metrics.open_streams.inc()
        try:
            await self._forward(response)
        finally:
            proxy.metrics.open_streams.dec()
            if not self.ended:
                proxy.background.put(("stream_end", self._ending()))

    def _ending(self) -> dict:
        """The stream-end envelope (the events over the cap counted as lost)."""
        self.ended = True
        if self.splitter.oversized:
            self.exchange.proxy.metrics.lost("too-large", "an SSE event over --record-max-bytes or "
                                             "ARCHIVER_RECORD_LIMIT", self.splitter.oversized)  # fmt: skip
        ending = stream_end(self.exchange.id, timestamp(), self.events, self.response.status, self.end)
        if self.unreadable:
            ending["response_unreadable"] = self.unreadable
        return ending

    def _not_split(self, why: str) -> None:
        """Its events can no longer be told apart: forwarded, not recorded; counted and logged."""
        self.unreadable = why
        self.exchange.proxy.metrics.lost(
            "undecodable", f"the events of a stream from {self.exchange.scope['path']} are not recorded: {why}"
        )

    def _past_bound(self, why: str) -> None:
        """It decoded past its bound: forwarded, no longer decoded; counted once and logged."""
        self.unreadable = why
        self.exchange.proxy.metrics.lost("decode-bound", f"a stream from {self.exchange.scope['path']}: {why}")

    async def _forward(self, response: aiohttp.ClientResponse) -> None:
        send = self.exchange.send
        headers = forwarded(list(response.raw_headers))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        relay = asyncio.ensure_future(self._relay(response))
        gone = asyncio.ensure_future(self._disconnect()) if self.exchange.request_done else None
        try:
            if gone is None:
                await relay
            else:
                await asyncio.wait({relay, gone}, return_when=asyncio.FIRST_COMPLETED)
                if relay.done() or self.forwarded_all:  # the disconnect that ends every response, once sent
                    await relay
                else:
                    self.end = "client-disconnected"
                    relay.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await relay
        except UpstreamBroken as exc:
            self.end = "upstream-error"
            self.exchange.proxy.metrics.upstream_failed(
                "stream-broken", f"the upstream agent broke off a stream ({exc})"
            )
        except (OSError, ClientGone):
            self.end = "client-disconnected"
        except asyncio.CancelledError:
            self.end = "proxy-shutdown"
            raise
        finally:
            for task in (relay, gone):
                if task is not None and not task.done():
                    task.cancel()

    async def _disconnect(self) -> None:
        while (await self.exchange.receive())["type"] != "http.disconnect":
            pass

    async def _relay(self, response: aiohttp.ClientResponse) -> None:
        durable = self.exchange.proxy.settings.durable
        body = OutgoingBody(self.exchange.send, durable, response.content_length, unary=False)
        async for chunk in chunks(response):
            arrived = time.time()
            await body.chunk(chunk)
            self._split(chunk, arrived)
        self.forwarded_all = True
        await self.exchange.keep(("stream_end", self._ending()), 0)
        await body.end()

    def _split(self, chunk: bytes, arrived: float) -> None:
        """Hand the events `chunk` ends to the writer."""
        if self.unreadable:
            return
        put, exchange = self.exchange.proxy.background.put, self.exchange.id
        try:
            for piece in self.decoder.feed(chunk) if self.decoder is not None else (chunk,):
                for event in self.splitter.feed(piece):
                    put(("event", exchange, self.events, arrived, event), len(event))
                    self.events += 1
        except PastBoundError as exc:
            self._past_bound(str(exc))
        except UndecodableError as exc:
            self._not_split(str(exc))
