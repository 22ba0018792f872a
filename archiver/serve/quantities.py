"""What a subject's claims measure, period by period: the series its chart draws (`charts.Series`)."""

from __future__ import annotations

import re
from datetime import date

from .charts import Period, Series


def fielded_middle(fielded: str | None) -> date | None:
    """The middle day of a fielded window `2026-04-02/2026-04-19` (or its one day); None when it is no dates."""
    if not fielded:
        return None
    try:
        ends = [date.fromisoformat(part.strip()[:10]) for part in fielded.split("/")]
    except ValueError:
        return None
    return date.fromordinal((ends[0].toordinal() + ends[-1].toordinal()) // 2)


def periods_of(rows: list[dict]) -> list[Period]:
    """The claims' periods in time order when each maps to dates of its own (one fielded window), else
    in the order of their names, numbers read as numbers (W2 before W10)."""
    windows: dict[str, set] = {}
    for row in rows:
        windows.setdefault(row.get("period") or "(none)", set()).add(fielded_middle(row.get("fielded")))
    periods = [Period(name, next(iter(w)) if len(w) == 1 else None) for name, w in windows.items()]
    dates = [p.when for p in periods]
    if all(dates) and len(set(dates)) == len(dates):
        return sorted(periods, key=lambda p: p.when)
    return sorted(periods, key=lambda p: natural(p.name))


def natural(text: str) -> list:
    """A sort key reading the numbers in `text` as numbers."""
    return [(0, int(piece), "") if piece.isdigit() else (1, 0, piece) for piece in re.split(r"(\d+)", text) if piece]


def series_of(rows: list[dict]) -> tuple[list[Series], list[Series]]:
    """One series per cited quantity (column, function, cell, unit), and one of the bases (n) per column,
    from the cited cells of `data.cited_values`. A value stated with `%` ("35%": 35) is a share (0.35)."""
    found: dict[tuple, Series] = {}
    bases: dict[str, Series] = {}
    for row in rows:
        period = row.get("period") or "(none)"
        unit = row.get("unit")
        cell = row["cell"] + (f" ({unit})" if unit and unit != "%" else "")
        key = (row.get("source_column") or "", row.get("source_function") or "", cell)
        scale = 100 if unit == "%" else 1
        found.setdefault(key, Series(*key)).add(period, row["low"] / scale, row["mean"] / scale, row["high"] / scale)
        if row.get("base_mean") is not None:
            base = bases.setdefault(key[0], Series(key[0], "", "base n"))
            base.add(period, row["base_low"], row["base_mean"], row["base_high"])
    ordered = sorted(found.values(), key=lambda s: (s.column, s.function, natural(s.cell)))
    return ordered, [bases[column] for column in sorted(bases)]
