"""`archiver verify`, second round (issue 29, item 3): calendar dates in the data layer's time zone, never the
machine's; the time zone and the comparison (a --tolerance given on the command line) in the fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.cli import main
from archiver.verify import DataLayer, DataLayerError
from tests.test_verify import COUNT_EXTRACTOR, analyst_cite, ingest, outcomes

# Five answers fielded in April 2026 (UTC), two of them near midnight: read in Tokyo the last is in May,
# read in Los Angeles the first is in March.
MOMENTS = """fielded_at,q1
2026-04-01T00:30:00+00:00,1
2026-04-10T12:00:00+00:00,1
2026-04-20T12:00:00+00:00,1
2026-04-29T12:00:00+00:00,1
2026-04-30T20:00:00+00:00,1
"""

EXTRACTORS = COUNT_EXTRACTOR

LAYER = """
[verify]
timeout = 20
{zone}

[[tables]]
name = "moments"
path = "moments.csv"
date_column = "fielded_at"

[[tables]]
name = "rows"
path = "moments.csv"

[extractors]
count = "extractors.py:count"
"""


@pytest.fixture
def moments(tmp_path: Path) -> Path:
    (tmp_path / "moments.csv").write_text(MOMENTS)
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(LAYER.format(zone=""))
    return path


APRIL = {"april": ({"n": 5}, analyst_cite("moments", period="April", fielded="2026-04-01/2026-04-30", base_n=4))}


@pytest.mark.slow
@pytest.mark.parametrize("machine", ["UTC", "Asia/Tokyo", "America/Los_Angeles"])
def test_the_fielded_window_is_in_utc_dates_whatever_the_machines_time_zone(
    archive, write, moments, monkeypatch, machine
):
    monkeypatch.setenv("TZ", machine)  # the extractor's process inherits it
    ingest(archive, write, APRIL)
    found = outcomes(archive.verify())
    assert found["april"] == ("reproduced", None, "rows fielded 2026-04-01..2026-04-30 (dates in UTC): 5 of 5")


@pytest.mark.slow
def test_a_declared_time_zone_is_used_and_is_part_of_the_fingerprint(archive, write, moments, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    ingest(archive, write, APRIL)
    assert outcomes(archive.verify())["april"][0] == "reproduced"
    moments.write_text(LAYER.format(zone='time_zone = "Asia/Tokyo"'))
    assert [v.stale for v in archive.verdicts().verdicts] == [True]
    found = outcomes(archive.verify())
    assert found["april"] == (
        "partial",  # read in Tokyo, no answer is of 30 April: the last one is of 1 May
        "the rows cover only dates 2026-04-01..2026-04-29 of the fielded window 2026-04-01..2026-04-30 "
        "(26 of 30 days missing); 0 of 1 claims agree over these rows; 1 of 1 claims differ; /n: claimed 5, "
        "re-derived 4",
        "rows fielded 2026-04-01..2026-04-30 (dates in Asia/Tokyo): 4 of 5",
    )
    assert [v.stale for v in archive.verdicts().verdicts] == [False]


def test_an_unknown_time_zone_is_a_clear_error(moments):
    moments.write_text(LAYER.format(zone='time_zone = "Mars/Olympus"'))
    with pytest.raises(DataLayerError, match=r"\[verify\]: time_zone 'Mars/Olympus' is not a known time zone"):
        DataLayer.load(moments)


@pytest.mark.slow
def test_a_tolerance_given_on_the_command_line_is_part_of_the_fingerprint(archive, write, moments, tmp_path):
    ingest(archive, write, {"near": ({"n": 4}, analyst_cite("rows", period="April", fielded=None, base_n=4))})
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    loose = CliRunner().invoke(main, ["verify", "--db", db, "--tolerance", "0.5"])
    assert loose.exit_code == 0, loose.output
    assert "relative tolerance 0.5" in loose.output
    status = CliRunner().invoke(main, ["verify", "--status", "--db", db, "--fail-on", "stale"])
    assert status.exit_code == 1, status.output  # the data layer compares as rounded: 4 is not 5
    assert "the data layer is unchanged since" not in status.output
    assert "STALE: 1 verdict rests on" in status.output
    again = CliRunner().invoke(main, ["verify", "--db", db, "--tolerance", "0.5", "--resume"])
    assert "resumed: 1 current verdict" in again.output  # the same tolerance: current


@pytest.mark.slow
def test_a_looser_tolerance_on_the_command_line_does_not_clear_the_audits_error(archive, write, moments, tmp_path):
    """Issue 29: a verdict made with `--tolerance 0.5` made the audit's rerun-differs error disappear."""
    ingest(archive, write, {"near": ({"n": 4}, analyst_cite("rows", period="April", fielded=None, base_n=4))})
    archive.close()
    db = str(tmp_path / "archive.duckdb")

    def rerun_findings() -> list[str]:
        found = CliRunner().invoke(main, ["audit", "--db", db, "--json", "--fail-on", "never"])
        return [f["rule"] for f in json.loads(found.output)["findings"] if f["rule"].startswith("rerun")]

    strict = CliRunner().invoke(main, ["verify", "--db", db])
    assert "differs" in strict.output, strict.output
    assert rerun_findings() == ["rerun-differs"]
    loose = CliRunner().invoke(main, ["verify", "--db", db, "--tolerance", "0.5"])
    assert loose.exit_code == 0, loose.output  # reproduced within 50%: the latest verdict, shown as such
    assert rerun_findings() == ["rerun-differs"]  # but the audit judges by the data layer's comparison
