"""What a subject's claims measure, period by period: the series its chart draws (`charts.Series`)."""

from __future__ import annotations

from datetime import date

from ..render.layout import blocks, cell_labels, name_of
from .charts import Period, Series


def labels_of(parts: dict[tuple, object]) -> dict[tuple, str]:
    """(file, result key, Part index, pointer) -> the cell as a reader finds it ("share of 18-34")."""
    out = {}
    for (path, key, index), data in parts.items():
        for pointer, cell in cell_labels(blocks(data, {}, True)).items():
            out[(path, key, index, pointer)] = cell.label
    return out


def cell_of(row: dict, labels: dict[tuple, str]) -> str:
    """The label of a claim's cell, else its pointer read as a name."""
    for kind in ("task", "message", "context"):
        if row.get(f"{kind}_id"):
            found = labels.get(
                (row.get("source_path"), f"{kind}:{row[f'{kind}_id']}", row.get("part_index"), row.get("pointer"))
            )
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
    """The claims' periods in time order where they map to dates (each to one window), else by name."""
    windows: dict[str, set] = {}
    for row in rows:
        windows.setdefault(row.get("period") or "(none)", set()).add(fielded_middle(row.get("fielded")))
    periods = [Period(name, next(iter(w)) if len(w) == 1 else None) for name, w in windows.items()]
    return sorted(periods, key=lambda p: (p.when is None, p.when or date.min, p.name))


def series_of(rows: list[dict], labels: dict[tuple, str]) -> tuple[list[Series], dict[str, list[float]]]:
    """One series per cited quantity (column, function, cell), and the bases (n) per period."""
    found: dict[tuple, Series] = {}
    bases: dict[str, set] = {}
    for row in rows:
        if row.get("value") is None:
            continue
        period = row.get("period") or "(none)"
        key = (row.get("source_column") or "", row.get("source_function") or "", cell_of(row, labels))
        series = found.setdefault(key, Series(*key))
        series.values.setdefault(period, []).append(row["value"])
        if row.get("base_n") is not None:
            bases.setdefault(period, set()).add(row["base_n"])
    ordered = sorted(found.values(), key=lambda s: (s.column, s.function, s.cell))
    return ordered, {period: sorted(ns) for period, ns in bases.items()}
