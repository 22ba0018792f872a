"""Charts as SVG drawn here, in Python: every text escaped, no script, nothing fetched; colours by class
(the stylesheet's `.s0` to `.s7`), each mark a link to the list behind it."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 220, 48, 36, 12
SERIES_CLASSES = 8
MAX_SERIES = 8
MAX_BARS = 120


def _axis(top: float) -> str:
    """The value axis: 0, half and the top, with grid lines."""
    out = []
    for share in (0, 0.5, 1):
        y = HEIGHT - BOTTOM - share * (HEIGHT - BOTTOM - TOP)
        label = _number(top * share)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="tick" x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
    return "".join(out)


def _number(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.3g}"


def stacked_bars(rows: list[dict], x: str, series: str, y: str, link: Callable[[str, str], str], title: str) -> str:
    """Bars per `x` (a day), stacked by `series` (an agent, a rule), each segment a link; the last
    `MAX_BARS` days and the `MAX_SERIES` largest series (the rest as "other")."""
    totals: dict[str, int] = {}
    for row in rows:
        totals[str(row[series])] = totals.get(str(row[series]), 0) + row[y]
    kept = sorted(totals, key=lambda name: (-totals[name], name))[:MAX_SERIES]
    days = sorted({str(row[x]) for row in rows})[-MAX_BARS:]
    stacks: dict[str, dict[str, int]] = {day: {} for day in days}
    for row in rows:
        day, name = str(row[x]), str(row[series])
        if day in stacks:
            key = name if name in kept else "other"
            stacks[day][key] = stacks[day].get(key, 0) + row[y]
    if not days:
        return f'<p class="empty">{escape(title)}: nothing to chart.</p>'
    top = max(sum(stack.values()) for stack in stacks.values()) or 1
    step = (WIDTH - LEFT) / len(days)
    bar = max(1.0, step * 0.8)
    names = [*kept, "other"]
    marks = []
    for index, day in enumerate(days):
        base = HEIGHT - BOTTOM
        for name in names:
            value = stacks[day].get(name, 0)
            if not value:
                continue
            height = value / top * (HEIGHT - BOTTOM - TOP)
            base -= height
            label = f"{day} · {name}: {value:,}"
            href = link(day, name) if name != "other" else link(day, "")
            marks.append(
                f'<a href="{escape(href)}"><rect class="s{names.index(name) % SERIES_CLASSES}" '
                f'x="{LEFT + index * step:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{height:.1f}">'
                f"<title>{escape(label)}</title></rect></a>"
            )
    ticks = "".join(
        f'<text class="tick" x="{LEFT + i * step + bar / 2:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle">'
        f"{escape(day[5:])}</text>"
        for i, day in enumerate(days)
        if i % max(1, len(days) // 8) == 0
    )
    legend = "".join(
        f'<span class="key"><span class="swatch s{i % SERIES_CLASSES}"></span>{escape(name)}</span>'
        for i, name in enumerate(names)
        if any(name in stack for stack in stacks.values())
    )
    return _figure(title, _axis(top) + "".join(marks) + ticks, legend)


def ranges(rows: list[dict], link: Callable[[str], str], title: str) -> str:
    """Per period: the cited values' range (least to greatest) and median, each a link to its claims."""
    rows = [row for row in rows if row.get("value_median") is not None]
    if not rows:
        return f'<p class="empty">{escape(title)}: no cited numbers.</p>'
    top = max(row["value_max"] for row in rows)
    bottom = min(0.0, min(row["value_min"] for row in rows))
    span = (top - bottom) or 1.0
    step = (WIDTH - LEFT) / len(rows)

    def y_of(value: float) -> float:
        return HEIGHT - BOTTOM - (value - bottom) / span * (HEIGHT - BOTTOM - TOP)

    marks, previous = [], None
    for index, row in enumerate(rows):
        x = LEFT + (index + 0.5) * step
        period = row["period"] or "(none)"
        label = (
            f"{period}: median {_number(row['value_median'])}, {_number(row['value_min'])} to "
            f"{_number(row['value_max'])} over {row['claim_values']:,} stated numbers; "
            f"n {row['base_min']} to {row['base_max']}"
        )
        median = y_of(row["value_median"])
        if previous:
            marks.append(
                f'<line class="trend" x1="{previous[0]:.1f}" y1="{previous[1]:.1f}" x2="{x:.1f}" y2="{median:.1f}"/>'
            )
        previous = (x, median)
        marks.append(
            f'<a href="{escape(link(row["period"] or ""))}"><g class="period">'
            f'<line class="range" x1="{x:.1f}" x2="{x:.1f}" y1="{y_of(row["value_min"]):.1f}" '
            f'y2="{y_of(row["value_max"]):.1f}"/><circle class="median" cx="{x:.1f}" cy="{median:.1f}" r="5"/>'
            f"<title>{escape(label)}</title></g></a>"
            f'<text class="tick" x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle">'
            f"{escape(period[:18])}</text>"
        )
    return _figure(title, _axis(top) + "".join(marks), "")


def _figure(title: str, inner: str, legend: str) -> str:
    return (
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}">{inner}</svg>'
        f'<div class="legend">{legend}</div></figure>'
    )
