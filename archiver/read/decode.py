"""A record's JSON text into a value: orjson's speed, the standard library's exactness where it matters.

orjson reads an integer beyond 64 bits as a float (2**64 becomes 1.8446744073709552e+19) or refuses
it as infinite; such a number is read exactly by the standard library instead. NaN and Infinity are
not JSON and are refused by name; invalid UTF-8 is refused with the offset of the first bad byte.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

import orjson

from ..errors import RecordError

_DIGITS_AS_ZEROS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_RUN = b"0" * 19  # every integer orjson cannot hold exactly has 19 digits or more
_CONSTANTS = (b"NaN", b"Infinity")


class InvalidJSONError(RecordError):
    """The record's payload is not JSON; the message is the one-line reason."""


def decode(payload: bytes) -> Any:
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        return _decode_refused(payload, exc)
    return _exact(payload) if _long_digits(payload) else value


_SCAN_BYTES = 4 * 2**20


def _long_digits(payload: bytes) -> bool:
    """Whether a run of 19 digits occurs (C-speed scans: a regular expression crawls on a 200 MB line),
    a few MiB at a time, overlapping by a run's length: a huge payload is not copied whole."""
    if len(payload) <= _SCAN_BYTES:
        return _LONG_RUN in payload.translate(_DIGITS_AS_ZEROS)
    step = _SCAN_BYTES - len(_LONG_RUN)
    return any(
        _LONG_RUN in payload[start : start + _SCAN_BYTES].translate(_DIGITS_AS_ZEROS)
        for start in range(0, max(1, len(payload)), step)
    )


def _exact(payload: bytes) -> Any:
    """The standard library's reading. It recurses: a payload nested near orjson's 1024 levels can
    exhaust Python's recursion limit, and is refused by its depth. It accepts a lone surrogate escape
    ("\\ud800"), which orjson refuses and no UTF-8 text can hold: refused too."""
    try:
        value = json.loads(payload, parse_constant=_refuse_constant, parse_float=_finite_float)
        if b"\\ud" in payload or b"\\uD" in payload:
            json.dumps(value, ensure_ascii=False).encode()
    except RecursionError:
        raise InvalidJSONError(f"JSON nested too deeply ({nesting_depth(payload)} levels)") from None
    except UnicodeEncodeError:
        raise InvalidJSONError(
            "invalid JSON: a string holds a lone surrogate (\\ud800 to \\udfff without its pair)"
        ) from None
    return value


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(payload: bytes) -> int:
    """How many arrays and objects deep the JSON text nests, brackets inside strings not counted."""
    brackets = _STRING.sub(b"", payload).translate(None, _NOT_BRACKETS)
    return max(accumulate(_DEPTH_STEP[byte] for byte in brackets), default=0)


def _decode_refused(payload: bytes, exc: orjson.JSONDecodeError) -> Any:
    reason = " ".join(str(exc).split())
    if "UTF-8" in reason:
        try:
            payload.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise InvalidJSONError(
                f"invalid JSON: invalid UTF-8 byte 0x{payload[bad.start]:02x} at byte {bad.start}"
            ) from None
    number_refused = "infinity" in reason and _long_digits(payload)
    if number_refused or any(constant in payload for constant in _CONSTANTS):
        try:
            value = _exact(payload)
        except InvalidJSONError:
            raise
        except (ValueError, RecursionError):
            pass
        else:
            if number_refused:
                return value
    raise InvalidJSONError(f"invalid JSON: {reason}") from None


def _refuse_constant(name: str):
    raise InvalidJSONError(f"invalid JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InvalidJSONError(f"invalid JSON: {text[:40]} is beyond the range of a double")
    return value
