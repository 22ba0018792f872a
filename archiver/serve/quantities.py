"""What a subject's claims measure, period by period: the series its chart draws (`charts.Series`)."""

from __future__ import annotations

import re
from datetime import date

from ..render.layout import blocks, cell_labels, name_of
from .charts import Period, Series


def labels_of(parts: dict) -> dict[tuple, str]:
    """(the Part's key, pointer) -> the cell as a reader finds it ("share of 18-34"); a Part's key is
    its `part_id` or its (file, result key, Part index), as `data.part_data` was asked."""
    out = {}
    for key, data in parts.items():
        for pointer, cell in cell_labels(blocks(data, {}, True)).items():
            out[(key, pointer)] = cell.label
    return out


def cell_of(row: dict, labels: dict[tuple, str]) -> str:
    """The label of a claim's cell, else its pointer read as a name."""
    keys = (
        [row["part_id"]]
        if row.get("part_id")
        else [
            (row.get("source_path"), f"{kind}:{row[f'{kind}_id']}", row.get("part_index"))
            for kind in ("task", "message", "context")
            if row.get(f"{kind}_id")
        ]
    )
    for key in keys:
        found = labels.get((key, row.get("pointer")))
        if found:
            return found
    return name_of(row.get("pointer") or "")


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


def series_of(rows: list[dict], labels: dict[tuple, str]) -> tuple[list[Series], list[Series]]:
    """One series per cited quantity (column, function, cell), and one of the bases (n) per column,
    from the cited cells of `data.cited_values`."""
    found: dict[tuple, Series] = {}
    bases: dict[str, Series] = {}
    for row in rows:
        period = row.get("period") or "(none)"
        key = (row.get("source_column") or "", row.get("source_function") or "", cell_of(row, labels))
        found.setdefault(key, Series(*key)).add(period, row["low"], row["mean"], row["high"])
        if row.get("base_mean") is not None:
            base = bases.setdefault(key[0], Series(key[0], "", "base n"))
            base.add(period, row["base_low"], row["base_mean"], row["base_high"])
    ordered = sorted(found.values(), key=lambda s: (s.column, s.function, natural(s.cell)))
    return ordered, [bases[column] for column in sorted(bases)]
