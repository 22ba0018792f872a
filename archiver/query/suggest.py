"""Why a selection matched nothing: its text filter values that match no stored value, each with the
values it may have meant (the same letters in another case, or the closest spellings). Whether a value
matches is asked of the archive with the selection's own condition, so a hint never disagrees with the
query it explains."""

from __future__ import annotations

import difflib

import duckdb

from ..store import views
from .selection import _COPY_FILTERS, _TEXT_COLUMNS, Selection, like_pattern

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
        relation = f"({views.copies()})" if name in _COPY_FILTERS else "citations"
        for value in [given] if isinstance(given, str) else given:
            where, params = Selection.of(**{name: value}).where()
            if con.execute(f"SELECT EXISTS (SELECT 1 FROM {relation} WHERE {where})", params).fetchone()[0]:
                continue
            close = closest(con, relation, column, value)
            meant = f": did you mean {' or '.join(map(repr, close))}?" if close else ": no such value"
            phrases.append(f"--{name} {value!r}{meant}")
    return phrases


def closest(con: duckdb.DuckDBPyConnection, relation: str, column: str, value: str) -> list[str]:
    """The stored values `value` matches ignoring case, else the closest spellings (ignoring case)."""
    same = con.execute(
        f"SELECT DISTINCT {column} FROM {relation} WHERE {column} ILIKE ? ESCAPE '\\' ORDER BY 1 LIMIT {CLOSEST}",
        [like_pattern(value)],
    ).fetchall()
    if same:
        return [item for (item,) in same]
    stored = con.execute(f"SELECT DISTINCT CAST({column} AS VARCHAR) FROM {relation} WHERE {column} IS NOT NULL")
    lowered = {item.lower(): item for (item,) in stored.fetchall()}
    return [
        lowered[item] for item in difflib.get_close_matches(value.replace("*", "").lower(), lowered, CLOSEST, CUTOFF)
    ]
