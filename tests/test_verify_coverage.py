"""`archiver verify`, second round (issue 29, item 1): rows that fall short of the citation's fielded window
or base n make a `partial` verdict, never `reproduced`; every verdict states how far its rows reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver.verify.coverage import Coverage
from tests.test_verify import COUNT_EXTRACTOR, ingest, outcomes, plain_cite

EXTRACTORS = COUNT_EXTRACTOR

LAYER = """
[verify]
timeout = 20

[[tables]]
name = "daily"
path = "daily.csv"
date_column = "fielded_on"

[extractors]
count = "extractors.py:count"
"""


def daily_rows(first_day: int, last_day: int, per_day: int) -> str:
    """`per_day` answers of 1 on each day of April 2026 from `first_day` to `last_day`, weight 1."""
    rows = [f"2026-04-{day:02d},1,1.0" for day in range(first_day, last_day + 1) for _ in range(per_day)]
    return "fielded_on,q1,wt\n" + "\n".join(rows) + "\n"


@pytest.fixture
def daily(tmp_path: Path) -> Path:
    (tmp_path / "daily.csv").write_text(daily_rows(1, 15, 20))  # 300 rows, 04-01..04-15
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(LAYER)
    return path


def cite(fielded: str, n: int | None, weight: str = "unweighted") -> dict:
    base = {"name": "Online panel", "n": n} if n is not None else None
    return plain_cite("count", "daily", "April", fielded=fielded, weight=weight, base=base)


@pytest.mark.slow
def test_a_window_the_rows_cover_partly_is_partial_never_reproduced(archive, write, daily):
    ingest(
        archive,
        write,
        {
            "half": ({"n": 300}, cite("2026-04-01/2026-04-30", 300)),
            "covered": ({"n": 300}, cite("2026-04-01/2026-04-15", 300)),
        },
    )
    report = archive.verify()
    found = outcomes(report)
    assert found["half"] == (
        "partial",
        "the rows cover only dates 2026-04-01..2026-04-15 of the fielded window 2026-04-01..2026-04-30 "
        "(15 of 30 days missing); 1 of 1 claims agree over these rows",
        "rows fielded 2026-04-01..2026-04-30: 300 of 300",
    )
    assert found["covered"][0] == "reproduced"
    coverage = {v.task_id: v.coverage for v in report.verdicts}
    assert coverage == {
        "half": "dates 2026-04-01..2026-04-15: 15 of 30 days of the window, 15 missing; 300 rows for base n=300",
        "covered": "dates 2026-04-01..2026-04-15: 15 of 15 days of the window, none missing; 300 rows for base n=300",
    }
    assert archive.con.execute("SELECT verdict, coverage FROM latest_verdicts ORDER BY verdict").fetchall() == [
        ("partial", coverage["half"]),
        ("reproduced", coverage["covered"]),
    ]


@pytest.mark.slow
def test_a_base_n_the_rows_cannot_reach_is_partial(archive, write, daily):
    ingest(
        archive,
        write,
        {
            "n600": ({"n": 300}, cite("2026-04-01/2026-04-15", 600)),
            "n600-weighted": ({"n": 300}, cite("2026-04-01/2026-04-15", 600, weight="wt")),
            "n300-weighted": ({"n": 300}, cite("2026-04-01/2026-04-15", 300, weight="wt")),
        },
    )
    report = archive.verify()
    found = outcomes(report)
    assert found["n600"][:2] == (
        "partial",
        "the citation's base n=600 is more than the 300 rows re-run; 1 of 1 claims agree over these rows",
    )
    assert found["n600-weighted"][1].startswith("the citation's base n=600 is more than the 300 rows (weighted 300.0)")
    assert found["n300-weighted"][0] == "reproduced"
    assert {v.task_id: v.coverage for v in report.verdicts}["n600-weighted"] == (
        "dates 2026-04-01..2026-04-15: 15 of 15 days of the window, none missing; "
        "300 rows (weighted 300.0) for base n=600"
    )


@pytest.mark.slow
def test_partial_is_shown_audited_and_fails_only_at_not_rerunnable(archive, write, daily):
    ingest(archive, write, {"half": ({"n": 300}, cite("2026-04-01/2026-04-30", 300))})
    report = archive.verify()
    assert report.summary()["partial"] == 1
    assert not report.fails("differs")
    assert report.fails("not-rerunnable")
    assert "RE-RUN PARTIAL, over rows fielded 2026-04-01..2026-04-30: 300 of 300" in archive.render("half")
    (finding,) = archive.audit(rules=["rerun-partial"]).findings
    assert (finding.rule, finding.severity, finding.task_id) == ("rerun-partial", "warning", "half")
    assert "used rows short of it: the rows cover only dates 2026-04-01..2026-04-15" in finding.detail


def test_coverage_without_a_window_states_the_rows_against_the_base():
    coverage = Coverage(rows=120, weighted=None)
    assert coverage.describe(120) == "120 rows for base n=120"
    assert coverage.describe(None) is None
    assert coverage.shortfall(120) is None
    assert coverage.shortfall(121) == ("the citation's base n=121 is more than the 120 rows re-run")


@pytest.mark.slow
def test_serve_filters_and_shows_partial_and_unscoped_verdicts(archive, write, daily, tmp_path):
    from starlette.testclient import TestClient

    from archiver.serve.app import create_app

    ingest(archive, write, {"half": ({"n": 300}, cite("2026-04-01/2026-04-30", 300))})
    archive.verify()
    archive.close()
    with TestClient(create_app(str(tmp_path / "archive.duckdb")), base_url="http://localhost") as client:
        twin = client.get("/verify.json?verdict=partial").json()
        assert [(row["task_id"], row["verdict"], row["coverage"]) for row in twin["rows"]] == [
            (
                "half",
                "partial",
                "dates 2026-04-01..2026-04-15: 15 of 30 days of the window, 15 missing; 300 rows for base n=300",
            )
        ]
        assert twin["verdicts_by_status"] == {"partial": 1}
        assert client.get("/verify.json?verdict=unscoped").json()["count"] == 0
        assert "<option selected>partial</option>" in client.get("/verify?verdict=partial").text
