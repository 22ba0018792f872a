"""Charts as SVG drawn here, in Python: every text escaped, no script, nothing fetched; colours by class
(the stylesheet's `.s0` to `.s7`), each mark a link to the list behind it.

Numbers of different units never share an axis: a column's cited values are drawn one series per cited
quantity (its study, table, column, function, cell and unit: `quantities.Quantity`; those on invalid or
type-lost citations hollow and labelled), in one panel per unit
(shares, counts, other values such as means), with the bases (n) in a panel of their own. Periods stand
on a time axis where each maps to its own fielded dates, else in their order; days are spaced by their
real gaps; tick labels carry the year; a count's axis has whole ticks only.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from html import escape

WIDTH, LEFT, RIGHT, TOP = 600, 56, 24, 12
PLOT = 170
"""Height of a chart's plotting area, above its x-axis labels."""
SERIES_CLASSES = 8
MAX_SERIES = 8
MAX_BARS = 120
LINE = 14
"""Height of a line of tick labels (the stylesheet's 12px text)."""
LABEL_CHARS = 16
"""Characters per line of a period's label under its point (labels wrap at spaces, never cut)."""


# Value axes: a few round ticks, whole ones for counts.


def ticks(top: float, whole: bool, bottom: float = 0.0) -> list[float]:
    """Round values from `bottom` (0 or below) to at least `top`: steps of 1, 2 or 5 times a power of ten,
    at least 1 when the axis counts whole things."""
    span = (top - bottom) or abs(top) or 1.0
    raw = span / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if whole:
        step = max(1, round(step))
    first = math.floor(bottom / step) * step
    out = [first]
    while out[-1] < top - 1e-12 * span:
        out.append(out[-1] + step)
    return [round(v, 12) for v in out]


def number(value: float, share: bool = False) -> str:
    """A tick or a value as read: a share as a percentage, a whole number with separators."""
    if share:
        return f"{value * 100:.0f}%" if abs(value * 100 - round(value * 100)) < 1e-9 else f"{value * 100:.1f}%"
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _value_axis(values: list[float], whole: bool, share: bool) -> tuple[Callable[[float], float], str]:
    """The y of a value, and the axis drawn: grid lines and labelled ticks."""
    top = max(values) if values else 1.0
    bottom = min(0.0, min(values) if values else 0.0)
    marks = ticks(top, whole, bottom)
    low, high = marks[0], marks[-1] if marks[-1] > marks[0] else marks[0] + 1

    def y_of(value: float) -> float:
        return TOP + PLOT - (value - low) / (high - low) * PLOT

    out = []
    for mark in marks:
        y = y_of(mark)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(
            f'<text class="tick" x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{escape(number(mark, share))}</text>'
        )
    return y_of, "".join(out)


# Horizontal axes: days and periods.


def day_axis(days: list[date]) -> tuple[Callable[[date], float], float]:
    """The x of a day on a time axis from the first of `days` to the last (days spaced by their real
    gaps), and one day's width."""
    first, last = min(days), max(days)
    pad = 14  # room for half a bar at either end
    width = (WIDTH - LEFT - RIGHT - 2 * pad) / ((last - first).days + 1)
    return (lambda day: LEFT + pad + ((day - first).days + 0.5) * width), width


def date_ticks(days: list[date], x_of: Callable[[date], float], y: float) -> str:
    """Labelled dates under a time axis, each with its year: the first of every month or few months
    over a span of more than two months (`2026-04`), else days (`2026-04-21`)."""
    first, last = min(days), max(days)
    if (last - first).days > 62:
        months = (last.year - first.year) * 12 + last.month - first.month
        every = max(1, math.ceil((months + 1) / 6))
        shown = [_month(first, k) for k in range(1, months + 1, every)]
        labels = [(day, day.strftime("%Y-%m")) for day in shown]
    else:
        every = max(1, math.ceil(((last - first).days + 1) / 6))
        shown = [date.fromordinal(first.toordinal() + k) for k in range(0, (last - first).days + 1, every)]
        labels = [(day, day.isoformat()) for day in shown]
    return "".join(
        f'<line class="grid" x1="{x_of(day):.1f}" x2="{x_of(day):.1f}" y1="{TOP}" y2="{TOP + PLOT}"/>'
        f'<text class="tick" x="{x_of(day):.1f}" y="{y:.1f}" text-anchor="middle">{text}</text>'
        for day, text in labels
    )


def _month(start: date, ahead: int) -> date:
    """The first day of the month `ahead` months after `start`'s."""
    index = start.year * 12 + start.month - 1 + ahead
    return date(index // 12, index % 12 + 1, 1)


def wrapped(text: str, x: float, y: float, cls: str = "tick") -> str:
    """`text` in lines of at most `LABEL_CHARS` characters (broken at spaces, never cut), centred at x."""
    lines = textwrap.wrap(text, LABEL_CHARS, break_long_words=False, break_on_hyphens=False) or [""]
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else LINE}">{escape(line)}</tspan>' for i, line in enumerate(lines)
    )
    return f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{spans}</text>'


def label_lines(texts: list[str]) -> int:
    return max(
        (len(textwrap.wrap(t, LABEL_CHARS, break_long_words=False, break_on_hyphens=False)) for t in texts), default=1
    )


# Stacked bars per day (results per agent, findings per rule).


def stacked_bars(rows: list[dict], x: str, series: str, y: str, link: Callable[[str, str], str], title: str) -> str:
    """Bars per `x` (a day) on a time axis, stacked by `series` (an agent, a rule), each segment a link;
    the last `MAX_BARS` days and at most `MAX_SERIES` series (past that, the largest and "other")."""
    totals: dict[str, int] = {}
    for row in rows:
        totals[str(row[series])] = totals.get(str(row[series]), 0) + row[y]
    ranked = sorted(totals, key=lambda name: (-totals[name], name))
    kept = ranked if len(ranked) <= MAX_SERIES else ranked[: MAX_SERIES - 1]  # "other" takes the last colour
    days = sorted({_day(row[x]) for row in rows})[-MAX_BARS:]
    if not days:
        return f'<p class="empty">{escape(title)}: nothing to chart.</p>'
    stacks: dict[date, dict[str, int]] = {day: {} for day in days}
    for row in rows:
        day, name = _day(row[x]), str(row[series])
        if day in stacks:
            key = name if name in kept else "other"
            stacks[day][key] = stacks[day].get(key, 0) + row[y]
    y_of, axis = _value_axis([sum(stack.values()) for stack in stacks.values()], whole=True, share=False)
    x_of, width = day_axis(days)
    bar = max(6.0, min(width * 0.8, 40.0))
    names = [*kept, "other"]
    marks = []
    for day in days:
        base = y_of(0)
        for name in names:
            value = stacks[day].get(name, 0)
            if not value:
                continue
            top = y_of(sum(stacks[day].get(n, 0) for n in names[: names.index(name) + 1]))
            label = f"{day.isoformat()} · {name}: {value:,}"
            href = link(day.isoformat(), name) if name != "other" else link(day.isoformat(), "")
            marks.append(
                f'<a href="{escape(href)}"><rect class="s{names.index(name) % SERIES_CLASSES}" '
                f'x="{x_of(day) - bar / 2:.1f}" y="{top:.1f}" width="{bar:.1f}" height="{base - top:.1f}">'
                f"<title>{escape(label)}</title></rect></a>"
            )
            base = top
    legend = [(names.index(n), n, False) for n in names if any(n in stack for stack in stacks.values())]
    height = TOP + PLOT + 26
    return _figure(title, axis + "".join(marks) + date_ticks(days, x_of, TOP + PLOT + 18), legend, height)


def _day(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])


# A column's (or study's...) cited values by period: one series per cited quantity, one panel per unit.


@dataclass
class Series:
    """One cited quantity (`quantities.Quantity`: its source, cell and unit) across periods, named by its
    label; hollow where its citations are invalid or lost their type."""

    name: str
    hollow: bool = False
    spans: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    """Period -> each cited cell's least, mean and greatest value there."""

    def add(self, period: str, low: float, middle: float, high: float) -> None:
        self.spans.setdefault(period, []).append((low, middle, high))

    def span(self, period: str) -> tuple[float, float, float]:
        """The series' least, middle (the median of its cells' means) and greatest value in `period`."""
        found = self.spans[period]
        return min(s[0] for s in found), _median([s[1] for s in found]), max(s[2] for s in found)

    def every(self) -> list[float]:
        return [v for found in self.spans.values() for s in found for v in s]

    @property
    def unit(self) -> str:
        """share (every value from 0 to 1, not all whole), count (all whole) or value (means, indices...)."""
        every = self.every()
        if all(0 <= v <= 1 for v in every) and not all(v == int(v) for v in every):
            return "share"
        return "count" if all(v == int(v) for v in every) else "value"


UNITS = {
    "share": "Shares",
    "count": "Counts",
    "value": "Means and other values",
    "base": "Base n (respondents the figures rest on)",
}


@dataclass
class Period:
    name: str
    when: date | None  # the middle of its fielded dates, where it has them


def period_axis(periods: list[Period]) -> tuple[dict[str, float], bool]:
    """The x of each period: on a time axis when every period maps to its own dates, else in order."""
    dated = [p.when for p in periods]
    if len(periods) > 1 and all(dated) and len(set(dated)) == len(dated):
        first, last = min(dated), max(dated)
        pad = 0.08 * (WIDTH - LEFT - RIGHT)
        scale = (WIDTH - LEFT - RIGHT - 2 * pad) / ((last - first).days or 1)
        return {p.name: LEFT + pad + (p.when - first).days * scale for p in periods}, True
    step = (WIDTH - LEFT - RIGHT) / max(1, len(periods))
    return {p.name: LEFT + (i + 0.5) * step for i, p in enumerate(periods)}, False


def quantity_panels(
    series: list[Series], periods: list[Period], bases: list[Series], link: Callable[[str], str], title: str
) -> list[str]:
    """One chart per unit of the cited quantities, then one of the bases; none over a single period (the
    table of quantities says it all), and a line saying so."""
    if not series:
        return [f'<p class="empty">{escape(title)}: no cited numbers.</p>']
    if len(periods) < 2:
        return [f'<p class="note">{escape(title)}: one period, so no chart; each quantity is in the table below.</p>']
    x_of, timed = period_axis(periods)
    out = []
    for unit in ("share", "count", "value"):
        chosen = [s for s in series if s.unit == unit]
        if chosen:
            out.append(_lines(chosen, periods, x_of, timed, unit, link, f"{title}: {UNITS[unit].lower()}"))
    if bases:
        out.append(_lines(bases, periods, x_of, timed, "base", link, f"{title}: {UNITS['base'].lower()}"))
    return out


def _lines(
    series: list[Series],
    periods: list[Period],
    x_of: dict[str, float],
    timed: bool,
    unit: str,
    link: Callable[[str], str],
    title: str,
) -> str:
    shown, more = series[:MAX_SERIES], len(series) - MAX_SERIES
    every = [v for s in shown for v in s.every()]
    y_of, axis = _value_axis(every, whole=unit in ("count", "base"), share=unit == "share")
    marks = []
    share = unit == "share"
    for index, s in enumerate(shown):
        cls = f"s{index % SERIES_CLASSES}" + (" hollow" if s.hollow else "")
        points = [(x_of[p.name], s.span(p.name), p) for p in periods if s.spans.get(p.name)]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y_of(middle):.1f}" for x, (_, middle, _), _ in points)
            marks.append(f'<polyline class="line {cls}" points="{path}"/>')
        for x, (low, middle, high), p in points:
            said = f"{s.name}, {p.name}: {number(middle, share)}"
            if high > low:
                said += f" ({number(low, share)} to {number(high, share)})"
                marks.append(
                    f'<line class="spread {cls}" x1="{x:.1f}" x2="{x:.1f}" y1="{y_of(low):.1f}" y2="{y_of(high):.1f}"/>'
                )
            marks.append(
                f'<a href="{escape(link(p.name))}"><circle class="point {cls}" cx="{x:.1f}" '
                f'cy="{y_of(middle):.1f}" r="4"><title>{escape(said)}</title></circle></a>'
            )
    names = [p.name for p in periods]
    lines = label_lines(names)
    step = max(1, math.ceil(len(periods) / 10))
    labels = "".join(
        wrapped(p.name + (f" ({p.when.isoformat()})" if timed and p.when else ""), x_of[p.name], TOP + PLOT + 18)
        for i, p in enumerate(periods)
        if i % step == 0
    )
    height = TOP + PLOT + 18 + LINE * (lines + (1 if timed else 0))
    legend = [(i, s.name, s.hollow) for i, s in enumerate(shown)] + (
        [(-1, f"and {more} more", False)] if more > 0 else []
    )
    return _figure(title, axis + "".join(marks) + labels, legend, height, unit)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _figure(title: str, inner: str, legend: list[tuple[int, str, bool]], height: float, unit: str = "") -> str:
    keys = "".join(
        f'<span class="key">{"" if i < 0 else _swatch(i, hollow)}{escape(name)}</span>' for i, name, hollow in legend
    )
    return (
        f'<figure class="chart"{f" data-unit={chr(34)}{unit}{chr(34)}" if unit else ""}>'
        f"<figcaption>{escape(title)}</figcaption>"
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
        f'aria-label="{escape(title)}">{inner}</svg>'
        f'<div class="legend">{keys}</div></figure>'
    )


def _swatch(index: int, hollow: bool) -> str:
    return f'<span class="swatch s{index % SERIES_CLASSES}{" hollow" if hollow else ""}"></span>'
