"""Numbers an agent states as strings: "35%", "1,210", "€1,250.50", "12.5 kg", "48,9 %", "$3.5m".

The core reads them (`archiver/core/src/cite/stated.rs`, whose comment gives the rules), at ingest as
claims with their unit and here for what `show` and `verify` read in a string.
"""

from __future__ import annotations

from dataclasses import dataclass

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
