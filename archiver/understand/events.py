"""The A2A events of one decoded record: its envelope unwrapped, then its payload read by the first
recogniser that knows the payload's shape (`archiver.understand.recognisers`; docs/recognisers.md)."""

from __future__ import annotations

from typing import Any

from .dialects import NotUnderstoodError, message_of, text_of
from .model import ErrorResponse, Event, Request
from .recognisers import RECOGNISERS

_JSON_TYPES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string"}


def events_of(value: Any) -> list[Event]:
    """All A2A events in one decoded record, its JSON-RPC envelope unwrapped."""
    if isinstance(value, list):
        return [event for item in value for event in events_of(item)]
    if isinstance(value, dict) and ("jsonrpc" in value or "method" in value):
        return _jsonrpc_events(value)
    if isinstance(value, dict) and "id" in value and ("result" in value or "error" in value) and "status" not in value:
        return _jsonrpc_events(value)
    if isinstance(value, dict) and value.keys() == {"error"}:  # a REST error body
        return _jsonrpc_events({"id": None, **value})
    return payload_events(value)


def payload_events(obj: Any) -> list[Event]:
    """Events in a JSON-RPC result, a REST body, a stream event or a stored object: those of the first
    recogniser, in the registry's order, that knows the object's shape."""
    if isinstance(obj, list):
        return [event for item in obj for event in payload_events(item)]
    if not isinstance(obj, dict):
        raise NotUnderstoodError(f"{_JSON_TYPES.get(type(obj), 'a value')} where an A2A object was expected")
    for recognise in RECOGNISERS:
        events = recognise(obj)
        if events is not None:
            return events
    raise NotUnderstoodError("no A2A object recognised (keys: " + ", ".join(sorted(map(str, obj))[:8]) + ")")


def _jsonrpc_events(obj: dict) -> list[Event]:
    rpc_id = obj.get("id")
    if "method" in obj:
        params = obj.get("params")
        message = params.get("message") if isinstance(params, dict) else None
        return [Request(rpc_id, text_of(obj.get("method")), message_of(message) if message is not None else None)]
    has_error, has_result = obj.get("error") is not None, "result" in obj
    if has_error and has_result:
        raise NotUnderstoodError("a JSON-RPC response carries both result and error")
    if has_error:
        error = obj["error"]
        if not isinstance(error, dict):
            raise NotUnderstoodError("a JSON-RPC error is not an object")
        return [ErrorResponse(rpc_id, error.get("code"), text_of(error.get("message")))]
    if not has_result:
        raise NotUnderstoodError("a JSON-RPC response with neither result nor error")
    if obj["result"] is None:
        return []
    return payload_events(obj["result"])
