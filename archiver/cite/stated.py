"""Numbers an agent states as strings: "35%", "1,210", "€1,250.50", "12.5 kg", "48,9 %", "$3.5m".

The core reads them (`archiver/core/src/cite/stated.rs`, whose comment gives the rules), at ingest as
claims with their unit and here for what `show` and `verify` read in a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from .._core import stated_number


@dataclass(frozen=True)
class StatedNumber:
    literal: str  # the number in plain decimal notation, as many places as written ("48.9"), or "3.5E+6"
    value: float
    unit: str | None  # "%", "‰", "€", "EUR", "kg", ...; None for a plain number ("1,210", "0.35")

    @property
    def percent(self) -> bool:
        return self.unit == "%"


def stated(text: str) -> StatedNumber | None:
    """The number a whole string states, with its unit; None when it states none."""
    found = stated_number(text) if isinstance(text, str) else None
    return StatedNumber(*found) if found else None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def literal_of(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def as_written(value: Any, written: str) -> str:
    """A re-derived number to one decimal more than the agent wrote (more only where needed to differ), not
    the float's every digit: the agent wrote 0.47, the data layer re-derives 0.415. A number the agent
    stated as a string is shown as it stated it: the agent wrote 35%, the data layer re-derives 48.9%."""
    number = stated(written)
    if number is not None and is_number(value):
        places = len(number.literal.partition(".")[2]) + 1
        if number.percent and abs(value) <= 1:
            return f"{value * 100:.{places}f}%"
        return f"{value:.{places}f}"
    if not is_number(value) or "." not in written or "e" in written.lower():
        return literal_of(value)
    places = len(written.split(".", 1)[1]) + 1
    text = f"{value:.{places}f}"
    while text == written and places < 17:
        places += 1
        text = f"{value:.{places}f}"
    return text
