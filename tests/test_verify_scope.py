"""`archiver verify`, second round (issue 29, item 5): a scope the table cannot apply is `unscoped` (a
warning naming what to declare), not `differs`; calendar periods (quarters, halves, ISO weeks, months, and
a wave's name mapped in `[periods]`) are mapped to the rows of a period column."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from archiver.verify import DataLayer, DataLayerError
from archiver.verify.periods import span
from tests.test_verify import COUNT_EXTRACTOR, ingest, outcomes, plain_cite

EXTRACTORS = COUNT_EXTRACTOR

LAYER = """
[verify]
timeout = 20

[periods]
"Wave 6" = "2026-04"

[[tables]]
name = "monthly"
path = "monthly.csv"
period_column = "month"

[[tables]]
name = "daily"
path = "daily.csv"
period_column = "day"

[[tables]]
name = "undated"
path = "daily.csv"

[extractors]
count = "extractors.py:count"
"""


def monthly() -> str:
    """Ten answers of 1 in each month of 2026 from January to April."""
    return "month,q1\n" + "".join(f"2026-{m:02d},1\n" for m in range(1, 5) for _ in range(10))


def daily() -> str:
    """One answer of 1 on each day from 2026-03-01 to 2026-04-30 (61 rows)."""
    first = date(2026, 3, 1)
    return "day,q1\n" + "".join(f"{first + timedelta(days=i)},1\n" for i in range(61))


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    (tmp_path / "monthly.csv").write_text(monthly())
    (tmp_path / "daily.csv").write_text(daily())
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(LAYER)
    return path


def cite(table: str, period: str, fielded: str | None = None, n: int = 5) -> dict:
    return plain_cite("count", table, period, n, fielded=fielded)


@pytest.mark.slow
def test_a_window_the_table_cannot_apply_is_unscoped_not_differs(archive, write, layer):
    # 30 answers were fielded in April; the table has no date column, so all 61 rows are counted
    ingest(archive, write, {"april": ({"n": 30}, cite("undated", "April", fielded="2026-04-01/2026-04-30"))})
    found = outcomes(archive.verify())
    assert found["april"] == (
        "unscoped",
        "the fielded window 2026-04-01..2026-04-30 was not applied: table 'undated' declares no date_column "
        "(declare date_column = the column of each row's fielding date); 0 of 1 claims agree over these rows; "
        "1 of 1 claims differ; /n: claimed 30, re-derived 61",
        "all rows: 61 (no date column declared: fielded 2026-04-01..2026-04-30 not applied)",
    )
    rules = {(f.rule, f.severity) for f in archive.audit(rules=["rerun-differs", "rerun-unscoped"]).findings}
    assert rules == {("rerun-unscoped", "warning")}
    assert "RE-RUN UNSCOPED, over all rows: 61" in archive.render("april")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("table", "period", "n", "rows"),
    [
        (
            "monthly",
            "2026-Q1",
            30,
            "rows with month in '2026-Q1' (2026-01-01..2026-03-31: 2026-01, 2026-02, 2026-03): 30 of 40",
        ),
        (
            "monthly",
            "Q1 2026",
            30,
            "rows with month in 'Q1 2026' (2026-01-01..2026-03-31: 2026-01, 2026-02, 2026-03): 30 of 40",
        ),
        (
            "monthly",
            "2026-H1",
            40,
            "rows with month in '2026-H1' (2026-01-01..2026-06-30: 2026-01, 2026-02, 2026-03, 2026-04): 40 of 40",
        ),
        ("monthly", "Wave 6", 10, "rows with month in 'Wave 6' (2026-04-01..2026-04-30: 2026-04): 10 of 40"),
        (
            "daily",
            "2026-W14",
            7,
            "rows with day in '2026-W14' (2026-03-30..2026-04-05: 2026-03-30, 2026-03-31, 2026-04-01, 2026-04-02, "
            "2026-04-03, 2026-04-04, …): 7 of 61",
        ),
        (
            "daily",
            "April 2026",
            30,
            "rows with day in 'April 2026' (2026-04-01..2026-04-30: 2026-04-01, 2026-04-02, 2026-04-03, 2026-04-04, "
            "2026-04-05, 2026-04-06, …): 30 of 61",
        ),
        ("monthly", "2026-04", 10, "rows with month = '2026-04': 10 of 40"),
    ],
)
def test_calendar_periods_are_mapped_to_the_rows_of_a_period_column(archive, write, layer, table, period, n, rows):
    ingest(archive, write, {"t": ({"n": n}, cite(table, period))})
    assert outcomes(archive.verify())["t"] == ("reproduced", None, rows)


@pytest.mark.slow
def test_a_period_no_row_falls_in_is_not_rerunnable(archive, write, layer):
    ingest(archive, write, {"q3": ({"n": 0}, cite("monthly", "2026-Q3"))})
    assert outcomes(archive.verify())["q3"][:2] == (
        "not-rerunnable",
        "table 'monthly' has no rows with month in '2026-Q3' (2026-07-01..2026-09-30: none)",
    )


def test_a_periods_mapping_must_name_a_calendar_period(layer):
    layer.write_text(LAYER.replace('"Wave 6" = "2026-04"', '"Wave 6" = "spring"'))
    with pytest.raises(DataLayerError, match=r"\[periods\] 'Wave 6': 'spring' is not a calendar period"):
        DataLayer.load(layer)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("2026-Q4", "2026-10-01", "2026-12-31"),
        ("H2 2026", "2026-07-01", "2026-12-31"),
        ("2025W53", None, None),  # 2025 has 52 ISO weeks
        ("2020-W53", "2020-12-28", "2021-01-03"),
        ("Feb 2028", "2028-02-01", "2028-02-29"),
        ("W6 (April 2026)", None, None),
    ],
)
def test_calendar_spans(text, first, last):
    expected = None if first is None else (date.fromisoformat(first), date.fromisoformat(last))
    assert span(text) == expected
