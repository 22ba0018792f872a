"""How far the rows an extractor was given reach: the fielded window's days and the citation's base n.

A re-run over rows that stop on 04-15 while the citation was fielded to 04-30, or over 300 rows for a
base of n=600, re-derives numbers of another sample: whatever they are, the verdict is `partial`, never
`reproduced`. The worker counts (`measure`), the parent judges (`Coverage.shortfall`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

# The base n a weighted or rounded count still reaches: a base of 600 is met by 599.6 weighted rows.
BASE_ROUNDING = 0.5


@dataclass(frozen=True)
class Coverage:
    """What the rows used hold: how many (and their weighted sum), and, with a fielded window applied,
    the window and the first, last and number of distinct dates present."""

    rows: int
    weighted: float | None = None
    window_start: date | None = None
    window_end: date | None = None
    first: date | None = None
    last: date | None = None
    days_present: int = 0
    unscoped: str | None = None  # the citation's scope that could not be applied to these rows, and why

    @classmethod
    def of(cls, counted: dict | None) -> Coverage | None:
        if counted is None:
            return None
        dates = {k: date.fromisoformat(v) if v else None for k, v in counted.items() if k in _DATES}
        return cls(**{**counted, **dates})

    @property
    def window_days(self) -> int:
        return (self.window_end - self.window_start).days + 1 if self.window_start and self.window_end else 0

    def describe(self, base_n: float | None) -> str | None:
        """`dates 2026-04-01..2026-04-15: 15 of 30 days of the window, 15 missing; 300 rows for base n=600`."""
        parts = []
        if self.window_days:
            missing = self.window_days - self.days_present
            present = f"dates {self.first}..{self.last}" if self.first else "no dates"
            parts.append(
                f"{present}: {self.days_present} of {self.window_days} days of the window, "
                + (f"{missing} missing" if missing else "none missing")
            )
        if base_n is not None:
            parts.append(f"{self._rows()} for base n={_n(base_n)}")
        return "; ".join(parts) or None

    def shortfall(self, base_n: float | None) -> str | None:
        """Why the rows cannot stand for the citation's sample, or None: the window's first or last day
        holds no row, or the base n is more than the rows (or their weighted sum) reach."""
        reasons = []
        if self.window_days and (self.first != self.window_start or self.last != self.window_end):
            present = f"dates {self.first}..{self.last}" if self.first else "no dates"
            reasons.append(
                f"the rows cover only {present} of the fielded window {self.window_start}..{self.window_end} "
                f"({self.window_days - self.days_present} of {self.window_days} days missing)"
            )
        reach = max(self.rows, self.weighted or 0)
        if base_n is not None and base_n > reach + BASE_ROUNDING:
            reasons.append(f"the citation's base n={_n(base_n)} is more than the {self._rows()} re-run")
        return "; ".join(reasons) or None

    def _rows(self) -> str:
        weighted = f" (weighted {self.weighted:,.1f})" if self.weighted is not None else ""
        return f"{self.rows:,} rows{weighted}"


_DATES = ("window_start", "window_end", "first", "last")


def _n(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"
