"""Compare a result's claims with what the extractor re-derived, pointer by pointer.

A claim is found in the re-derived JSON by its RFC 6901 pointer. By default a claim compares *as
rounded*: written with k decimal places (its literal as the agent sent it), it reproduces when the
re-derived value rounds to it at k places, half-even or half-up (`0.11` reproduces 0.1095, `4`
reproduces 4.0000001, `1210` does not reproduce 1250). A literal of 15 or more significant digits is
a double printed in full: it reproduces within a relative 1e-12, as the order of a sum changes its
last digits. A data layer or table may instead ask for an
absolute tolerance (|claimed - rerun| <= absolute) or a relative one
(|claimed - rerun| <= relative * max(|claimed|, |rerun|)); integer literals follow the same rule.

A claim that does not reproduce but would after a factor of 100 or 1,000 is still a difference; its
note names the factor, and the cause only where the numbers show it: a claim within 0..1 against data
within 0..100 is a fraction against a percent, but 1,250 against 125,000 is only "100 times" (euros
against cents, or any other pair of units: the data does not say).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation

from ..cite.stated import stated
from .values import non_finite

_MISSING = object()
_INTEGER_LITERAL = re.compile(r"^-?\d+$")
FULL_PRECISION_DIGITS, FULL_PRECISION_RELATIVE = 15, 1e-12

# (the factor the data gives the claim times, the note that names it)
SCALES = (
    (100, "scale: the data gives 100 times the claimed value"),
    (1 / 100, "scale: the data gives 1/100 of the claimed value"),
    (1000, "scale: the data gives 1,000 times the claimed value"),
    (1 / 1000, "scale: the data gives 1/1,000 of the claimed value"),
)
FRACTION_AGAINST_PERCENT = "scale: claimed as fraction, data gives percent"
PERCENT_AGAINST_FRACTION = "scale: claimed as percent, data gives fraction"


@dataclass(frozen=True)
class ClaimValue:
    pointer: str
    literal: str
    value: float
    stated: str | None = None  # the string the agent wrote, when it stated the number in one ("35%")
    unit: str | None = None  # its unit: "%", "€", "kg"

    def as_fraction(self) -> ClaimValue:
        """A percent claim as the fraction it is: "48.9%" is 0.489, written to three places."""
        return ClaimValue(self.pointer, str(Decimal(self.literal).scaleb(-2)), self.value / 100)


@dataclass(frozen=True)
class Comparison:
    """How a claim is compared: as rounded (no tolerance given), or within an absolute or relative
    tolerance."""

    absolute: float | None = None
    relative: float | None = None

    def describe(self) -> str:
        if self.absolute is not None:
            return f"absolute tolerance {self.absolute:g}"
        if self.relative is not None:
            return f"relative tolerance {self.relative:g}"
        return "as rounded (half-even or half-up at the claim's decimal places)"

    def agrees(self, claim: ClaimValue, rerun) -> bool:
        if not is_number(rerun) or math.isnan(claim.value) or math.isnan(rerun):
            return False
        if self.absolute is not None:
            return abs(claim.value - rerun) <= self.absolute
        if self.relative is not None:
            return abs(claim.value - rerun) <= self.relative * max(abs(claim.value), abs(rerun))
        return rounds_to(claim.literal, rerun)


AS_ROUNDED = Comparison()


def rounds_to(literal: str, rerun: float) -> bool:
    """Whether `rerun` rounded at the literal's decimal places (half-even or half-up) is the literal."""
    try:
        claimed = Decimal(literal.strip())
        value = Decimal(repr(float(rerun)))
    except (InvalidOperation, ValueError, OverflowError):
        return False
    if not claimed.is_finite() or not value.is_finite():
        return False
    if len(claimed.as_tuple().digits) >= FULL_PRECISION_DIGITS:
        return math.isclose(float(claimed), float(rerun), rel_tol=FULL_PRECISION_RELATIVE)
    quantum = Decimal((0, (1,), claimed.as_tuple().exponent))
    try:
        return any(value.quantize(quantum, rounding=mode) == claimed for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP))
    except InvalidOperation:
        return False


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


def agrees(claim: ClaimValue, rerun, comparison: Comparison) -> bool:
    """Whether the re-derived value reproduces the claim. A number stated as a string compares by its
    number; a percent ("48.9%") with a percent or with the fraction it is (0.489); a re-derived string
    is read the same way ("48.9%" against "48,9 %")."""
    if isinstance(rerun, str):
        if claim.stated is not None and rerun.strip() == claim.stated.strip():
            return True
        found = stated(rerun)
        if found is None:
            return False
        if found.percent and claim.unit == "%":
            return comparison.agrees(claim, found.value)
        rerun = found.value / 100 if found.percent else found.value
    if claim.unit == "%":
        return comparison.agrees(claim, rerun) or comparison.agrees(claim.as_fraction(), rerun)
    return comparison.agrees(claim, rerun)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def scale_note(claim: ClaimValue, rerun, comparison: Comparison) -> str | None:
    """The scale mismatch that explains a difference, when a factor of 100 or 1,000 makes it agree."""
    if not is_number(rerun) or claim.value == 0:
        return None
    for factor, note in SCALES:
        if comparison.agrees(claim, rerun / factor):
            return _percent_note(factor, abs(claim.value), abs(rerun)) or note
    return None


def _percent_note(factor: float, claimed: float, rerun: float) -> str | None:
    """The fraction-against-percent cause, when both numbers lie where shares do (0..1 and 0..100)."""
    if factor == 100 and claimed <= 1 and rerun <= 100:
        return FRACTION_AGAINST_PERCENT
    if factor == 1 / 100 and claimed <= 100 and rerun <= 1:
        return PERCENT_AGAINST_FRACTION
    return None


def differences(claims: list[ClaimValue], rerun, comparison: Comparison = AS_ROUNDED) -> list[dict]:
    """One entry per claim that the re-derived value does not reproduce: pointer, claimed, rerun (and a
    note when the value is missing, not a number, or on another scale)."""
    found = []
    for claim in claims:
        value = resolve(rerun, claim.pointer)
        if agrees(claim, value, comparison):
            continue
        entry = {
            "pointer": claim.pointer,
            "claimed": claim.stated if claim.stated is not None else _number(claim.literal, claim.value),
            "rerun": None if value is _MISSING else non_finite(value) or value,
        }
        if non_finite(value):
            entry["note"] = f"the extractor returned {non_finite(value)}"
        elif value is _MISSING:
            entry["note"] = "the re-derived value has nothing at this pointer"
        elif not is_number(value) and not (isinstance(value, str) and stated(value)):
            entry["note"] = "the re-derived value here is not a number"
        elif claim.unit != "%" and (note := scale_note(claim, value, comparison)):
            entry["note"] = note
        found.append(entry)
    return found


def _number(literal: str, value: float):
    return int(literal) if _INTEGER_LITERAL.match(literal.strip()) else value
