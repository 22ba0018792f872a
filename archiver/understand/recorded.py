"""The envelopes of `archiver record`'s spool segments, read into the canonical model.

An envelope is the proxy's account of one exchange (`kind` `exchange`: request and response), of a
stream's start (`stream-open`: its request), of one event of a stream (`event`: the event's own JSON
rides with it) or of a stream's end (`stream-end`). What each request, response and event carries is
read exactly as the same JSON in a plain capture (`events_of`); the envelope adds what the archive can
use: the exchange id links a request to its answer (clients reuse JSON-RPC ids across connections, an
exchange id is unique), and its time stamps a task whose status carries none.
"""

from __future__ import annotations

from typing import Any

from .dialects import NotUnderstoodError, message_of, text_of, timestamp_of
from .events import events_of
from .model import Event, Request, StatusUpdate, Task

ENVELOPE_VERSION = 1
KINDS = ("exchange", "stream-open", "event", "stream-end")
LENIENT_BINDINGS = ("card", "push-config", "other")
"""Bindings whose responses need not be A2A results: a body no recogniser knows is passed by, not refused."""


def is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and "a2a_record" in value


def recorded_events(envelope: Any, event: Any = None) -> tuple[str | None, list[Event]]:
    """The exchange id and the A2A events of one envelope (and, for a stream event, the event's JSON);
    NotUnderstoodError naming what is wrong with an envelope that is not the contract's."""
    kind = _checked(envelope)
    exchange = text_of(envelope.get("exchange"))
    if kind == "event":
        if event is None:
            raise NotUnderstoodError("a2a-record event envelope without the event's data lines")
        events = events_of(event)
    elif kind == "stream-end":
        events = []
    else:
        events = _request(envelope, exchange)
        if kind == "exchange":
            events += _response(envelope)
    return exchange, _stamped(events, timestamp_of(envelope.get("time")))


def _checked(envelope: Any) -> str:
    if not isinstance(envelope, dict):
        raise NotUnderstoodError("a2a-record envelope is not a JSON object")
    if envelope.get("a2a_record") != ENVELOPE_VERSION:
        raise NotUnderstoodError(f"a2a-record envelope of version {envelope.get('a2a_record')!r}, not 1")
    kind = envelope.get("kind")
    if kind not in KINDS:
        raise NotUnderstoodError(f"a2a-record envelope of unknown kind {kind!r}")
    if kind != "stream-end" and not isinstance(envelope.get("exchange"), str):
        raise NotUnderstoodError(f"a2a-record {kind} envelope without an exchange id")
    return kind


def _request(envelope: dict, exchange: str | None) -> list[Event]:
    """The request's user message, keyed by the exchange (a JSON-RPC request, or a REST body `{"message"}`)."""
    body = envelope.get("request")
    if not isinstance(body, dict):
        return []
    params = body.get("params") if "jsonrpc" in body or "method" in body else body
    message = params.get("message") if isinstance(params, dict) else None
    if message is None:
        return []
    method = text_of(body.get("method")) or text_of(envelope.get("path"))
    return [Request(exchange, method, message_of(message))]


def _response(envelope: dict) -> list[Event]:
    body = envelope.get("response")
    if body is None:
        return []
    try:
        return events_of(body)
    except NotUnderstoodError:
        if envelope.get("binding") in LENIENT_BINDINGS or "pushNotificationConfig" in str(envelope.get("path")):
            return []
        raise


def _stamped(events: list[Event], time) -> list[Event]:
    """A task or status update with no time of its own takes the envelope's."""
    if time is not None:
        for event in events:
            if isinstance(event, (Task, StatusUpdate)) and event.status.timestamp is None:
                event.status.timestamp = time
    return events
