"""Why a selection matched nothing: its text filter values that match no stored value, each with the
values it may have meant (the same letters in another case, or the closest spellings)."""

from __future__ import annotations

import difflib
import re

import duckdb

from ..store import views
from .selection import _COPY_FILTERS, _TEXT_COLUMNS, Selection, is_glob, like_pattern

CLOSEST = 3
CUTOFF = 0.8  # how alike a spelling must be to be suggested (difflib's ratio)


def unmatched(con: duckdb.DuckDBPyConnection, selection: Selection) -> list[str]:
    """One phrase per text filter value no stored value matches, e.g. `--study 'versant*': did you mean
    'Versant Mega Tracker'?`; empty when each value matches something (then only their combination
    matches nothing)."""
    phrases = []
    for name, column in _TEXT_COLUMNS.items():
        given = getattr(selection, name)
        if not given:
            continue
        stored = _distinct(con, column, name in _COPY_FILTERS)
        for value in [given] if isinstance(given, str) else given:
            if not any(_matches(value, item) for item in stored):
                close = closest(value, stored)
                meant = f": did you mean {' or '.join(map(repr, close))}?" if close else ": no such value"
                phrases.append(f"--{name} {value!r}{meant}")
    return phrases


def closest(value: str, stored: list[str]) -> list[str]:
    """The stored values `value` matches ignoring case, else the closest spellings (ignoring case)."""
    same = [item for item in stored if _matches(value, item, re.IGNORECASE)]
    if same:
        return same[:CLOSEST]
    lowered = {item.lower(): item for item in stored}
    return [
        lowered[item] for item in difflib.get_close_matches(value.replace("*", "").lower(), lowered, CLOSEST, CUTOFF)
    ]


def _distinct(con: duckdb.DuckDBPyConnection, column: str, of_copies: bool) -> list[str]:
    relation = f"({views.copies()})" if of_copies else "citations"
    rows = con.execute(f"SELECT DISTINCT CAST({column} AS VARCHAR) FROM {relation} WHERE {column} IS NOT NULL")
    return sorted(row[0] for row in rows.fetchall())


def _matches(value: str, item: str, flags: int = 0) -> bool:
    if not is_glob(value):
        return re.fullmatch(re.escape(value.replace("\\*", "*")), item, flags) is not None
    pattern = "".join(
        ".*" if char == "%" and not escaped else re.escape(char) for escaped, char in _unescaped(like_pattern(value))
    )
    return re.fullmatch(pattern, item, flags | re.DOTALL) is not None


def _unescaped(pattern: str):
    """(escaped, char) for each character of a LIKE pattern whose escape character is `\\`."""
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            yield True, next(chars, "")
        else:
            yield False, char
