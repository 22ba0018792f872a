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
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
import orjson
from multidict import CIMultiDict
from yarl import URL

from . import CONNECT_TIMEOUT, READ_TIMEOUT, RECORD_MAX_BYTES
from .metrics import RecordMetrics
from .segments import RECORD_VERSION, timestamp
from .wire import EventSplitter, binding_of, forwarded, header, protocol_of, recorded_headers

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
        headers = forwarded(scope["headers"])
        url = upstream + (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode("latin-1")
        try:
            content = await self._content()
            if content == b"" and not any(k.lower() in (b"content-length", b"transfer-encoding") for k, _ in headers):
                content = None  # no body: none is sent, nor a Content-Length
            return await self.proxy.client.request(
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

    async def _refuse(self, status: int, reason: str, text: str, exc: Exception) -> None:
        self.proxy.metrics.upstream_failed(reason, f"{text} ({type(exc).__name__})")
        body = orjson.dumps({"error": {"code": status, "message": f"archiver record: {text}"}})
        with contextlib.suppress(OSError):
            await _reply(self.send, status, body, b"application/json")

    def envelope(self, kind: str, response: aiohttp.ClientResponse) -> dict:
        """The envelope fields an exchange and a stream-open share (the spool contract, docs/record.md)."""
        request, request_raw = _parsed(self.request_body, self.request_size, self.cap)
        path = self.scope["path"]
        found = {
            "a2a_record": RECORD_VERSION,
            "kind": kind,
            "proxy": self.proxy.settings.proxy_id,
            "upstream": self.proxy.upstream,
            "connection": self.proxy.connection(self.scope),
            "exchange": self.id,
            "time": self.time,
            "method": self.scope["method"],
            "path": path,
            "query": self.scope["query_string"].decode("latin-1"),
            "binding": binding_of(path, request),
            "protocol": protocol_of(path, request, header(self.scope["headers"], b"a2a-version")),
            "status": response.status,
            "request_headers": recorded_headers(self.scope["headers"]),
            "response_headers": recorded_headers(response.raw_headers),
            "request": request,
        }
        _add_raw(found, "request", request_raw, self.request_size > self.cap)
        return found

    async def _respond(self, response: aiohttp.ClientResponse) -> None:
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            await Stream(self, response).run()
            return
        headers = forwarded(list(response.raw_headers))
        if self.proxy.settings.rewrite_card and _card_path(self.scope["path"]):
            await self._rewritten_card(response, headers)
            return
        await self.send({"type": "http.response.start", "status": response.status, "headers": headers})
        kept, size = [], 0
        async for chunk in chunks(response):
            size += len(chunk)
            if size <= self.cap:
                kept.append(chunk)
            elif kept:
                kept = []
            await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
        await self.send({"type": "http.response.body", "body": b""})
        self.record(response, kept, size)

    def record(self, response: aiohttp.ClientResponse, kept: list[bytes], size: int) -> None:
        envelope = self.envelope("exchange", response)
        parsed, raw = _parsed(kept, size, self.cap)
        envelope["time_end"] = timestamp()
        envelope["response"] = parsed
        _add_raw(envelope, "response", raw, size > self.cap)
        self.proxy.metrics.requests.labels(envelope["binding"]).inc()
        self.proxy.background.put(("exchange", envelope), self.request_size + size)

    async def _rewritten_card(self, response: aiohttp.ClientResponse, headers: list) -> None:
        body = b"".join([chunk async for chunk in chunks(response)])
        shown = body
        with contextlib.suppress(orjson.JSONDecodeError):
            card = orjson.loads(body)
            if isinstance(card, dict) and response.status == 200:
                shown = orjson.dumps(rewrite_card(card, self.proxy.upstream, self.proxy.settings.rewrite_card))
        headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(shown)).encode()))
        await self.send({"type": "http.response.start", "status": response.status, "headers": headers})
        await self.send({"type": "http.response.body", "body": shown})
        self.record(response, [body], len(body))


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


def _parsed(chunks: list[bytes], size: int, cap: int) -> tuple[object, bytes | None]:
    """A body as the spool keeps it: (its JSON, None), or (None, its bytes) when it is no JSON, or
    (None, None) when it is empty or over the cap."""
    if size == 0 or size > cap:
        return None, None
    body = b"".join(chunks)
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError:
        return None, body


def _add_raw(envelope: dict, key: str, raw: bytes | None, truncated: bool) -> None:
    if raw:
        envelope[f"{key}_base64"] = base64.b64encode(raw).decode()
    if truncated:
        envelope[f"{key}_truncated"] = True


class Stream:
    """An SSE response: forwarded chunk by chunk as it arrives; each event recorded as it ends."""

    def __init__(self, exchange: Exchange, response: aiohttp.ClientResponse) -> None:
        self.exchange, self.response = exchange, response
        self.splitter = EventSplitter(exchange.cap)
        self.events = 0
        self.end = "complete"
        self.forwarded_all = False  # every chunk of the upstream's body was received and sent on

    async def run(self) -> None:
        exchange, response = self.exchange, self.response
        proxy = exchange.proxy
        opening = exchange.envelope("stream_open", response)
        opening["kind"] = "stream-open"
        proxy.metrics.requests.labels(opening["binding"]).inc()
        proxy.background.put(("stream_open", opening), exchange.request_size)
        proxy.metrics.open_streams.inc()
        try:
            await self._forward(response)
        finally:
            proxy.metrics.open_streams.dec()
            if self.splitter.oversized:
                proxy.metrics.lost("too-large", "an SSE event over --record-max-bytes", self.splitter.oversized)
            ending = {
                "a2a_record": RECORD_VERSION,
                "kind": "stream-end",
                "exchange": exchange.id,
                "time": timestamp(),
                "events": self.events,
                "status": response.status,
                "end": self.end,
            }
            proxy.background.put(("stream_end", ending))

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
        send, put, exchange = self.exchange.send, self.exchange.proxy.background.put, self.exchange.id
        async for chunk in chunks(response):
            arrived = time.time()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            for event in self.splitter.feed(chunk):
                put(("event", exchange, self.events, arrived, event), len(event))
                self.events += 1
        self.forwarded_all = True
        await send({"type": "http.response.body", "body": b""})
