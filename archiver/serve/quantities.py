"""What a subject's claims measure, period by period: the quantities cited, each the series a chart
draws (`charts.Series`) and the rows of the table beside it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from .cells import source
from .charts import Period, Series

STANDINGS = ("valid", "type lost", "invalid")
"""A citation's standing: valid, its media type stripped in a stored copy (inferred), or invalid."""


@dataclass(frozen=True)
class Quantity:
    """A cited quantity, the one key of every series, table row and twin row of what was claimed: the
    source it is read from (study, table, column, function), the cell it fills and its unit, and the
    standing of the citations it rests on (numbers on invalid or type-lost citations are kept apart)."""

    study: str
    table: str
    column: str
    function: str
    cell: str
    unit: str
    standing: str

    @classmethod
    def of(cls, row: dict) -> Quantity:
        unit = row.get("unit") or ""
        standing = "invalid" if row.get("valid") is False else "type lost" if row.get("inferred") else "valid"
        return cls(
            row.get("study") or "",
            row.get("source_table") or "",
            row.get("source_column") or "",
            row.get("source_function") or "",
            row["cell"] + (f" ({unit})" if unit and unit != "%" else ""),
            unit,
            standing,
        )

    def base(self) -> Quantity:
        """The base (n) its citations state."""
        return replace(self, cell="base n", unit="")

    @property
    def hollow(self) -> bool:
        return self.standing != "valid"

    @property
    def source(self) -> str:
        return source({"source_table": self.table, "source_column": self.column, "source_function": self.function})

    @property
    def label(self) -> str:
        """`18-34: share · extractFunnel(versant_flat, s14r5) · Versant Mega Tracker`, its standing after it
        where the citation is not valid."""
        said = " · ".join(part for part in (self.cell, self.source, self.study) if part)
        return said + (f" [{self.standing} citation]" if self.hollow else "")

    def sort_key(self) -> tuple:
        return (STANDINGS.index(self.standing), self.column, self.study, self.table, self.function, natural(self.cell))


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
    """One series per cited quantity (`Quantity`), and one of the bases (n) per source, from the cited
    cells of `data.cited_values`. A value stated with `%` ("35%": 35) is a share (0.35)."""
    found: dict[Quantity, Series] = {}
    bases: dict[Quantity, Series] = {}
    for row in rows:
        period = row.get("period") or "(none)"
        quantity = Quantity.of(row)
        scale = 100 if quantity.unit == "%" else 1
        series = found.setdefault(quantity, Series(quantity.label, quantity.hollow))
        series.add(period, row["low"] / scale, row["mean"] / scale, row["high"] / scale)
        if row.get("base_mean") is not None:
            base = quantity.base()
            bases.setdefault(base, Series(base.label, base.hollow)).add(
                period, row["base_low"], row["base_mean"], row["base_high"]
            )
    return [found[q] for q in sorted(found, key=Quantity.sort_key)], [
        bases[q] for q in sorted(bases, key=Quantity.sort_key)
    ]


QUANTITY_FIELDS = (
    "study", "table", "column", "function", "cell", "unit", "standing", "period", "least", "mean", "greatest",
    "base_least", "base_greatest",
)  # fmt: skip
"""The fields of a row of what was claimed (`quantity_rows`)."""


def quantity_rows(rows: list[dict]) -> list[dict]:
    """What was claimed, one row per quantity and period (the JSON twin's `quantities`, the page's table):
    its key's fields, its least, mean and greatest value, and its bases."""
    keyed = sorted(
        ((Quantity.of(row), row) for row in rows), key=lambda q: (q[0].sort_key(), natural(q[1].get("period") or ""))
    )
    out = []
    for quantity, row in keyed:
        scale = 100 if quantity.unit == "%" else 1
        out.append(
            {
                "study": quantity.study,
                "table": quantity.table,
                "column": quantity.column,
                "function": quantity.function,
                "cell": quantity.cell,
                "unit": quantity.unit or None,
                "standing": quantity.standing,
                "period": row.get("period"),
                "least": row["low"] / scale,
                "mean": row["mean"] / scale,
                "greatest": row["high"] / scale,
                "base_least": row.get("base_low"),
                "base_greatest": row.get("base_high"),
            }
        )
    return out
