"""Numbers stated in strings are claims (issue 29, item 2): "35%", "$3.5m", "1,210 respondents" become rows
of `claims` with their unit and the string as written, at ingest and for archives made before (schema 14);
a result whose only numbers are strings is quantitative, and a claim's cell is found by the core."""

from __future__ import annotations

import pytest

from archiver.archive import Archive
from archiver.cite.stated import StatedNumber, stated
from tests.test_migrations import first_version_archive
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task

DATA = {
    "total": "$3.5m",
    "rows": [{"segment": "18-34", "share": "35%"}, {"segment": "35-54", "share": 0.41}],
    "n": "1,210 respondents",
    "wave": "2026",
}
CLAIMS = [
    ("/n", 1210.0, "1210", "respondents", "1,210 respondents", "n"),
    ("/rows/0/share", 35.0, "35", "%", "35%", "18-34: share"),
    ("/rows/1/share", 0.41, "0.41", None, None, "35-54: share"),
    ("/total", 3.5e6, "3.5E+6", "$", "$3.5m", "total"),
]
SELECT = "SELECT pointer, value, literal, unit, stated, cell FROM claims ORDER BY pointer"


@pytest.mark.slow
def test_strings_stating_numbers_are_claims_with_their_unit_and_cell(archive, write):
    archive.ingest([write("t.jsonl", [jsonrpc_result({"task": v1_task("t1", v1_cited_parts(DATA))})])])
    assert rows(archive, SELECT) == CLAIMS
    assert rows(archive, "SELECT claims FROM results") == [(4,)]


@pytest.mark.slow
def test_a_result_whose_only_numbers_are_strings_is_quantitative(archive, write):
    uncited = {"share": "35%", "label": "Wave 1"}
    archive.ingest([write("t.jsonl", [jsonrpc_result({"task": v1_task("t1", [{"data": uncited}])})])])
    findings = archive.audit().findings
    assert [(f.rule, f.result_key) for f in findings if f.severity == "error"] == [("uncited-result", "task:t1")]


def test_multipliers_read_after_a_currency_or_as_words():
    assert stated("$3.5m") == StatedNumber("3.5E+6", 3.5e6, "$")
    assert stated("3.5 million") == StatedNumber("3.5E+6", 3.5e6, None)
    assert stated("€12k") == StatedNumber("1.2E+4", 12_000.0, "€")
    assert stated("3.5 m") == StatedNumber("3.5", 3.5, "m")  # metres: no currency, so no multiplier
    assert stated("2026") is None


@pytest.mark.slow
def test_an_archive_made_before_has_its_claims_read_again(tmp_path, write):
    source = write("t.jsonl", [jsonrpc_result({"task": v1_task("t1", v1_cited_parts(DATA))})])
    path = str(tmp_path / "old.duckdb")
    expected = first_version_archive(path, source, tmp_path, version=13)
    with Archive.open(path, upgrade=False) as old:  # as schema 13 stored it: the number leaves only
        old.con.execute("DELETE FROM claims WHERE pointer <> '/rows/1/share'")
        old.con.execute("UPDATE results SET claims = 1")
    with Archive.open(path) as upgraded:
        assert rows(upgraded, SELECT) == CLAIMS
        assert upgraded.stats() == expected
        assert upgraded.check() == []
