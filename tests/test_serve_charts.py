"""The web view's charts (archiver.serve.charts): axes that mean something. Counts have whole ticks,
days stand at their real distance and carry their year, periods stand at their fielded dates."""

from __future__ import annotations

import re

from archiver.serve import charts, quantities


def bars(rows: list[dict]) -> str:
    return charts.stacked_bars(rows, "day", "agent", "results", lambda day, agent: f"/x?{day}", "Results per day")


def tick_texts(svg: str) -> list[str]:
    return re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)


def test_a_count_axis_has_whole_ticks():
    """A count axis topped at 9 had a tick "4.5"."""
    svg = bars([{"day": "2026-04-21", "agent": "a", "results": 9}])
    values = [t for t in tick_texts(svg) if not re.match(r"\d{4}-", t)]
    assert values == ["0", "5", "10"]
    assert charts.ticks(3, whole=True) == [0, 1, 2, 3]
    assert charts.ticks(0.42, whole=False) == [0, 0.2, 0.4, 0.6]
    assert charts.ticks(4.5, whole=True) == [0, 2, 4, 6]


def test_days_are_spaced_by_their_real_gaps_and_labelled_with_their_year():
    """Three days (one, then eight days later) were spaced evenly and labelled "04-21" without a year."""
    svg = bars(
        [
            {"day": "2026-04-21", "agent": "a", "results": 1},
            {"day": "2026-04-22", "agent": "a", "results": 1},
            {"day": "2026-04-30", "agent": "a", "results": 1},
        ]
    )
    xs = [
        float(x) + float(w) / 2
        for x, w in re.findall(r'<rect class="s0" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)
    ]
    assert round((xs[2] - xs[1]) / (xs[1] - xs[0]), 3) == 8
    dates = [t for t in tick_texts(svg) if "-" in t]
    assert dates[0] == "2026-04-21"
    assert all(re.fullmatch(r"2026-\d{2}-\d{2}", t) for t in dates)


def test_a_long_span_is_labelled_by_month_with_its_year():
    svg = bars([{"day": "2025-07-02", "agent": "a", "results": 1}, {"day": "2026-06-15", "agent": "a", "results": 1}])
    assert [t for t in tick_texts(svg) if "-" in t] == [
        "2025-08",
        "2025-10",
        "2025-12",
        "2026-02",
        "2026-04",
        "2026-06",
    ]


def test_periods_with_their_own_dates_stand_on_a_time_axis():
    periods = [
        charts.Period("W5 (March 2026)", charts.date(2026, 3, 11)),
        charts.Period("W6 (April 2026)", charts.date(2026, 4, 10)),
        charts.Period("W9 (October 2026)", charts.date(2026, 10, 7)),
    ]
    x_of, timed = charts.period_axis(periods)
    assert timed
    xs = [x_of[p.name] for p in periods]
    assert round((xs[2] - xs[1]) / (xs[1] - xs[0]), 2) == round(180 / 30, 2)
    same = [charts.Period("Wave 1", charts.date(2026, 5, 16)), charts.Period("Wave 2", charts.date(2026, 5, 16))]
    x_of, timed = charts.period_axis(same)  # one window for two periods: no dates of their own
    assert not timed
    assert x_of["Wave 1"] < x_of["Wave 2"]


def test_a_period_is_labelled_whole_on_lines_of_its_own():
    text = charts.wrapped("Wave 1 (November 2025)", 100, 200)
    assert re.findall(r">([^<]+)</tspan>", text) == ["Wave 1 (November", "2025)"]


def test_other_has_a_colour_of_its_own():
    """Nine agents: eight kept and "other" drew "other" in the first agent's colour."""
    svg = bars([{"day": "2026-04-21", "agent": f"agent {i}", "results": 10 - i} for i in range(9)])
    keys = re.findall(r'<span class="swatch (s\d)"></span>([^<]+)</span>', svg)
    assert [name for _, name in keys] == [*(f"agent {i}" for i in range(7)), "other"]
    assert len({cls for cls, _ in keys}) == 8


def test_a_series_is_one_source_and_a_bad_citation_is_drawn_hollow():
    """Two studies citing `visits_pw` were one series, their totals (1,480 and an invalid citation's 0)
    averaged to 740; now each source is a series, the invalid one hollow and labelled."""
    cell = {"source_column": "visits_pw", "source_function": "extractMean", "cell": "total", "unit": None}
    rows = [
        {
            **cell,
            "study": study,
            "source_table": table,
            "valid": valid,
            "inferred": False,
            "period": period,
            "low": n,
            "mean": n,
            "high": n,
            "base_low": n,
            "base_mean": n,
            "base_high": n,
        }
        for study, table, valid, n in (
            ("Meridian", "meridian_panel", True, 1480),
            ("Northwind", "nw_pulse_long", False, 0),
        )
        for period in ("2026-Q1", "2026-Q2")
    ]
    series, bases = quantities.series_of(rows)
    assert [(s.name, s.hollow) for s in series] == [
        ("total · extractMean(meridian_panel, visits_pw) · Meridian", False),
        ("total · extractMean(nw_pulse_long, visits_pw) · Northwind [invalid citation]", True),
    ]
    assert [b.name for b in bases] == [
        "base n · extractMean(meridian_panel, visits_pw) · Meridian",
        "base n · extractMean(nw_pulse_long, visits_pw) · Northwind [invalid citation]",
    ]
    assert all(s.span(p) == (s.every()[0],) * 3 for s in series for p in ("2026-Q1", "2026-Q2"))
    svg = "".join(charts.quantity_panels(series, quantities.periods_of(rows), bases, lambda p: "/x", "Claimed"))
    assert "spread" not in svg  # no bar from 0 to 1,480: no two sources share a point
    assert len(re.findall(r'<circle class="point s1 hollow"', svg)) == 4  # its two periods, in both panels
    assert re.findall(r'class="swatch s1 hollow"></span>([^<]+)<', svg)[0].endswith("[invalid citation]")
