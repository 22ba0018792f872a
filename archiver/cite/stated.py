"""Numbers an agent states as strings: "35%", "1,210", "€1,250.50", "12.5 kg", "48,9 %".

A Citations v1 claim is a numeric leaf of a data Part; an agent that writes `"share": "35%"` states a
number just the same. `stated` reads one from a whole string, with its unit: a percent or per-mille
sign, a currency (a symbol or an ISO code, before or after), or one word after it. Grouping is read
where it is unambiguous: "1,210" and "1.250.000" are thousands, "1.250,5" and "48,9" use a decimal
comma, "1.25" a decimal point; a comma followed by exactly three digits ("1,250") is read as thousands,
the convention of English-writing agents. A bare integer with no unit, sign or separator ("2026", "7")
is a label, not a stated number, and an ISO date or a range ("18-34") is no number at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_STATED = re.compile(
    r"""^\s*
    (?P<sign>[-+\u2212])?
    (?P<pre>[$€£¥]|[A-Z]{3}(?=[\s\d]))?\s?
    (?P<sign2>[-+\u2212])?
    (?P<number>\d[\d.,'\u00a0\u202f ]*\d|\d)
    \s?(?P<post>%|‰|[$€£¥]|[A-Za-z][A-Za-z./]{0,15})?
    \s*$""",
    re.VERBOSE,
)
_GROUPING = "'\u00a0\u202f "
_PERCENT_WORDS = {"%": "%", "percent": "%", "pct": "%", "‰": "‰"}


@dataclass(frozen=True)
class StatedNumber:
    literal: str  # the number in plain decimal notation, as many places as written: "48.9", "1210"
    value: float
    unit: str | None  # "%", "‰", "€", "EUR", "kg", ...; None for a plain number ("1,210", "0.35")

    @property
    def percent(self) -> bool:
        return self.unit == "%"


def stated(text: str) -> StatedNumber | None:
    """The number a whole string states, with its unit; None when it states none."""
    match = _STATED.match(text) if isinstance(text, str) else None
    if not match:
        return None
    literal = _plain_number(match["number"])
    if literal is None:
        return None
    unit = match["pre"] or match["post"]
    unit = _PERCENT_WORDS.get(unit.lower() if unit else unit, unit)
    negative = "-" in (match["sign"] or "") + (match["sign2"] or "") or "\u2212" in (match["sign"] or "")
    marked = unit or negative or not literal.isdigit() or literal != match["number"]
    if not marked:
        return None  # "2026": a label
    literal = ("-" if negative else "") + literal
    try:
        return StatedNumber(literal, float(Decimal(literal)), unit)
    except InvalidOperation:
        return None


def _plain_number(text: str) -> str | None:
    """Digits with grouping and a decimal separator, as a plain decimal literal, or None if the grouping
    is not one a writer would use."""
    for mark in _GROUPING:
        text = _ungroup(text, mark) if mark in text else text
        if text is None:
            return None
    commas, dots = text.count(","), text.count(".")
    if commas and dots:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        group = "." if decimal == "," else ","
        whole, _, fraction = text.rpartition(decimal)
        whole = _ungroup(whole, group)
        return None if whole is None or not fraction.isdigit() else f"{whole}.{fraction}"
    for mark, count in ((",", commas), (".", dots)):
        if count > 1 or (mark == "," and count == 1 and len(text.rpartition(",")[2]) == 3):
            return _ungroup(text, mark)  # thousands: "1,210", "1.250.000"
        if count == 1:
            whole, _, fraction = text.partition(mark)
            return f"{whole}.{fraction}" if whole.isdigit() and fraction.isdigit() else None
    return text if text.isdigit() else None


def _ungroup(text: str, mark: str) -> str | None:
    """ "1,250,000" without its group mark, if every group after the first has three digits."""
    first, *groups = text.split(mark)
    if not (1 <= len(first) <= 3 or not groups) or any(len(g) != 3 or not g.isdigit() for g in groups):
        return None if groups else text
    return first + "".join(groups)
