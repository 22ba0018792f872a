"""Spool segments as `archiver record` writes them (the spool contract in docs/ingest.md), built from the
real SDK traffic of `sample_transcripts/`: a fixture builder for the ingest side, not a second writer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "sample_transcripts"
PROXY = "0a1b2c3d"


def sample_lines(name: str) -> list[dict]:
    """The JSON lines of a sample file."""
    return [json.loads(line) for line in (SAMPLES / name).read_text().splitlines() if line.strip()]


def sample_events(name: str) -> list[bytes]:
    """The events of a sample SSE capture, each its lines exactly as sent (comments dropped), without
    the blank line ending it."""
    text = (SAMPLES / name).read_bytes().replace(b"\r\n", b"\n")
    return [
        b"".join(line + b"\n" for line in block.split(b"\n") if line and not line.startswith(b":"))
        for block in text.split(b"\n\n")
        if block.strip()
    ]


def event_json(event: bytes):
    """The JSON of a sample event: its `data:` lines joined."""
    return json.loads(
        b"\n".join(line[5:].removeprefix(b" ") for line in event.splitlines() if line.startswith(b"data:"))
    )


def stamp(second: int) -> str:
    return f"2026-11-30T17:40:{second:02d}.000000Z"


def exchange(exchange_id: str, request, response, second: int = 0, **fields) -> dict:
    """A unary exchange envelope."""
    return {
        "a2a_record": 1,
        "kind": "exchange",
        "proxy": PROXY,
        "upstream": "http://agent:9000",
        "connection": fields.pop("connection", "c1"),
        "exchange": exchange_id,
        "time": stamp(second),
        "time_end": stamp(second),
        "method": "POST",
        "path": fields.pop("path", "/a2a/jsonrpc"),
        "query": "",
        "binding": fields.pop("binding", "jsonrpc"),
        "protocol": fields.pop("protocol", "1.0"),
        "status": 200,
        "request_headers": {"content-type": "application/json"},
        "response_headers": {"content-type": "application/json"},
        "request": request,
        "response": response,
        **fields,
    }


def rpc_exchanges(name: str, prefix: str, protocol: str = "1.0") -> list[dict]:
    """A sample JSON-RPC log (a request line, then its response line) as exchange envelopes."""
    lines = sample_lines(name)
    requests = {line["id"]: line for line in lines if "method" in line}
    return [
        exchange(f"{prefix}-{n}", requests.get(line["id"]), line, n, protocol=protocol)
        for n, line in enumerate(line for line in lines if "method" not in line)
    ]


def unary_segment(path: Path, envelopes: list[dict]) -> Path:
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in envelopes))
    return path


def envelope_line(envelope: dict) -> bytes:
    return b": a2a-record " + json.dumps(envelope).encode() + b"\n"


@dataclass
class Stream:
    """One stream through the proxy: its request and its events as upstream sent them."""

    exchange: str
    request: dict | None
    events: list[bytes]
    binding: str = "jsonrpc"
    path: str = "/a2a/jsonrpc"
    sent: int = field(default=0)

    def opening(self, continued: bool = False) -> bytes:
        envelope = exchange(self.exchange, self.request, None, binding=self.binding, path=self.path)
        envelope.update(kind="stream-open", continued=continued) if continued else envelope.update(kind="stream-open")
        del envelope["response"], envelope["time_end"]
        return envelope_line(envelope)

    def event(self) -> bytes:
        block = self.events[self.sent]
        head = envelope_line(
            {
                "a2a_record": 1,
                "kind": "event",
                "exchange": self.exchange,
                "seq": self.sent,
                "time": stamp(10 + self.sent),
            }
        )
        self.sent += 1
        return head + block + b"\n"

    def ending(self, end: str = "complete") -> bytes:
        return envelope_line(
            {
                "a2a_record": 1,
                "kind": "stream-end",
                "exchange": self.exchange,
                "time": stamp(30),
                "events": self.sent,
                "status": 200,
                "end": end,
            }
        )


def stream_segment(
    path: Path, streams: list[Stream], events: int | None = None, continued: bool = False, end: str | None = "complete"
) -> Path:
    """A stream segment holding the given streams, their events interleaved one at a time; `events`: how
    many of each stream's remaining events go in it (the rest are for the next segment); `end`: how the
    streams end here (None: they go on in the next segment)."""
    chunks = [stream.opening(continued) for stream in streams]
    todo = {id(s): min(len(s.events) - s.sent, events if events is not None else len(s.events)) for s in streams}
    while any(todo.values()):
        for stream in streams:
            if todo[id(stream)]:
                chunks.append(stream.event())
                todo[id(stream)] -= 1
    if end is not None:
        chunks += [stream.ending(end) for stream in streams]
    path.write_bytes(b"".join(chunks))
    return path


def stream_request(events: list[bytes], method: str | None = "SendStreamingMessage") -> dict:
    """The request that opened a sample stream (JSON-RPC, or with no `method` a REST body): its user message,
    from the first snapshot's history."""
    first = event_json(events[0])
    result = first.get("result", first)
    message = result.get("task", result)["history"][0]
    if method is None:
        return {"message": message}
    return {"jsonrpc": "2.0", "id": first["id"], "method": method, "params": {"message": message}}
