"""Canonical JSON: the identity of content, numbers compared by value (4210 equals 4210.0)."""
from __future__ import annotations

import hashlib
import math
import re
from typing import Any

import orjson

_EXACT_FLOAT_LIMIT = 2**53
_REWRITTEN = re.compile(rb"[0-9]\.0(?:[,\]}]|$)|[0-9]{19}")
"""What `_normal` may rewrite, as orjson writes it: an integral float below 1e16 ("4210.0"), an integer of
2**63 or more (19 digits). A "12.05" is neither."""


def _normal(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) <= _EXACT_FLOAT_LIMIT:
            return int(value)
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else str(value)
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    return str(value)


def canonical_json(value: Any) -> bytes:
    """Sorted-key JSON with integral floats written as integers.

    Fast path: output in which `_REWRITTEN` finds nothing needs no rewriting.
    """
    try:
        dumped = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers beyond 64 bits
        dumped = b"0.0"
    if b".0" not in dumped or not _REWRITTEN.search(dumped):
        return dumped
    return orjson.dumps(_normal(value), option=orjson.OPT_SORT_KEYS)


def content_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()[:32]


def key_hash(*parts: str | None) -> str:
    """A stable identifier made of the given strings."""
    return hashlib.sha256("\x1f".join([p or "" for p in parts]).encode()).hexdigest()[:32]
