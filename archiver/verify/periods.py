"""Calendar periods as written in citations and in a table's period column, as spans of days.

A citation of "2026-Q1" against a table whose `period_column` holds months ("2026-01", "2026-02",
"2026-03") concerns those three months' rows. `span` reads a quarter, a half, an ISO week, a month, a
year or a day in the spellings analysts use; anything else (a wave's name, "W6 (April 2026)") is None
unless the data layer's `[periods]` maps it to one of them or to a range "2026-04-02/2026-04-19".
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

Span = tuple[date, date]  # the first and the last day, both included

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name} | {
    name.lower(): number for number, name in enumerate(calendar.month_abbr) if name
}
_QUARTER = re.compile(r"^(?:(\d{4})[- ]?Q([1-4])|Q([1-4])[- ]?(\d{4}))$", re.IGNORECASE)
_HALF = re.compile(r"^(?:(\d{4})[- ]?H([12])|H([12])[- ]?(\d{4}))$", re.IGNORECASE)
_ISO_WEEK = re.compile(r"^(\d{4})-?W(\d{2})$", re.IGNORECASE)
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_NAMED_MONTH = re.compile(r"^([A-Za-z]+)\.? (\d{4})$")
_YEAR = re.compile(r"^(\d{4})$")


def span(text: object) -> Span | None:
    """The days a period covers, or None when it is no calendar period this reads."""
    if isinstance(text, date):
        return text, text
    if not isinstance(text, str):
        return None
    text = text.strip()
    for read in (_range, _day, _quarter, _half, _iso_week, _month, _named_month, _year):
        try:
            found = read(text)
        except ValueError:  # a month 13, a week 54, a 30 February
            return None
        if found:
            return found
    return None


def within(inner: Span | None, outer: Span) -> bool:
    return inner is not None and outer[0] <= inner[0] and inner[1] <= outer[1]


def describe(found: Span) -> str:
    return f"{found[0].isoformat()}..{found[1].isoformat()}"


def _range(text: str) -> Span | None:
    if "/" not in text:
        return None
    start, _, end = text.partition("/")
    return date.fromisoformat(start.strip()), date.fromisoformat(end.strip())


def _day(text: str) -> Span | None:
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    day = date.fromisoformat(text)
    return day, day


def _months(year: int, first: int, count: int) -> Span:
    last = first + count - 1
    return date(year, first, 1), date(year, last, calendar.monthrange(year, last)[1])


def _quarter(text: str) -> Span | None:
    return _part_of_year(_QUARTER.match(text), 3)


def _half(text: str) -> Span | None:
    return _part_of_year(_HALF.match(text), 6)


def _part_of_year(match: re.Match | None, months: int) -> Span | None:
    """A quarter or a half, written year first ("2026-Q1") or last ("Q1 2026")."""
    if not match:
        return None
    year, number = (match[1], match[2]) if match[1] else (match[4], match[3])
    return _months(int(year), months * (int(number) - 1) + 1, months)


def _iso_week(text: str) -> Span | None:
    match = _ISO_WEEK.match(text)
    if not match:
        return None
    monday = date.fromisocalendar(int(match[1]), int(match[2]), 1)
    return monday, monday + timedelta(days=6)


def _month(text: str) -> Span | None:
    match = _MONTH.match(text)
    return _months(int(match[1]), int(match[2]), 1) if match else None


def _named_month(text: str) -> Span | None:
    match = _NAMED_MONTH.match(text)
    if not match or match[1].lower() not in _MONTHS:
        return None
    return _months(int(match[2]), _MONTHS[match[1].lower()], 1)


def _year(text: str) -> Span | None:
    match = _YEAR.match(text)
    return _months(int(match[1]), 1, 12) if match else None
