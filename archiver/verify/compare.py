"""Compare a result's claims with what the extractor re-derived, pointer by pointer.

A claim is found in the re-derived JSON by its RFC 6901 pointer. Counts compare exactly: when the
claim's literal is an integer or the extractor returned an integer there, the values must be equal
(`1210.0` equals `1210`). Every other number compares with a relative tolerance:
|claimed - rerun| <= tolerance * max(|claimed|, |rerun|).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_MISSING = object()
_INTEGER_LITERAL = re.compile(r"^-?\d+$")


@dataclass(frozen=True)
class ClaimValue:
    pointer: str
    literal: str
    value: float


def resolve(document, pointer: str):
    """The value at a JSON Pointer, or `_MISSING`."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return _MISSING
    current = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif (
            isinstance(current, list)
            and token.isdigit()
            and (token == "0" or not token.startswith("0"))
            and int(token) < len(current)
        ):
            current = current[int(token)]
        else:
            return _MISSING
    return current


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def agrees(claim: ClaimValue, rerun, tolerance: float) -> bool:
    if not is_number(rerun):
        return False
    if isinstance(rerun, int) or _INTEGER_LITERAL.match(claim.literal.strip()):
        return claim.value == rerun
    if math.isnan(claim.value) or math.isnan(rerun):
        return False
    return abs(claim.value - rerun) <= tolerance * max(abs(claim.value), abs(rerun))


def differences(claims: list[ClaimValue], rerun, tolerance: float) -> list[dict]:
    """One entry per claim that the re-derived value does not reproduce: pointer, claimed, rerun."""
    found = []
    for claim in claims:
        value = resolve(rerun, claim.pointer)
        if agrees(claim, value, tolerance):
            continue
        entry = {
            "pointer": claim.pointer,
            "claimed": _number(claim.literal, claim.value),
            "rerun": None if value is _MISSING else value,
        }
        if value is _MISSING:
            entry["note"] = "the re-derived value has nothing at this pointer"
        elif not is_number(value):
            entry["note"] = "the re-derived value here is not a number"
        found.append(entry)
    return found


def _number(literal: str, value: float):
    return int(literal) if _INTEGER_LITERAL.match(literal.strip()) else value
