"""`archiver ingest sample_transcripts/` stores exactly what the samples' manifest says they hold."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from tests.transcripts import SAMPLES, rows

MANIFEST = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))
CARD_FILES = [{"path": a["card"], "container": "json", "records": 1, "gzip": False} for a in MANIFEST["agents"]]
ALL_FILES = MANIFEST["files"] + CARD_FILES


def rel(path: str) -> str:
    return str(__import__("pathlib").Path(path).relative_to(SAMPLES))


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("samples") / "samples.duckdb")
    result = CliRunner().invoke(main, ["ingest", str(SAMPLES), "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    with Archive.open(db, read_only=True) as archive:
        yield archive, json.loads(result.stdout)


@pytest.mark.slow
def test_every_sample_file_ingests_with_no_quarantine(samples):
    archive, summary = samples
    assert summary["quarantined"] == 0
    assert summary["unrecognised_files"] == []
    assert summary["files"] == len(ALL_FILES)
    stored = {
        rel(path): (container, records, compression == "gzip")
        for path, container, records, compression in rows(
            archive, "SELECT path, container, records, compression FROM sources"
        )
    }
    assert stored == {f["path"]: (f["container"], f["records"], f["gzip"]) for f in ALL_FILES}


@pytest.mark.slow
def test_summary_counts_match_the_manifest(samples):
    _, summary = samples
    copies = [copy for result in MANIFEST["results"] for copy in result["copies"]]
    assert summary["results"] == len(MANIFEST["results"])
    assert summary["tasks"] == len({r["task_id"] for r in MANIFEST["results"] if r["key"].startswith("task:")})
    assert summary["copies"] == len(copies)
    assert summary["citations"] == sum(len(c["citations"]) for c in copies)
    assert summary["claims"] == sum(c["claims"] for c in copies)
    assert summary["error_responses"] == sum(e["count"] for e in MANIFEST["error_responses"])
    assert summary["agent_cards"] == len(MANIFEST["agents"])


@pytest.mark.slow
def test_each_stored_copy_matches(samples):
    archive, _ = samples
    found = {}
    for key, path, state, terminal, copy_id in rows(
        archive, "SELECT result_key, source_path, state, terminal, copy_id FROM results"
    ):
        claims = rows(archive, "SELECT count(*) FROM claims WHERE copy_id = ?", [copy_id])[0][0]
        kinds = Counter(
            dict(
                rows(
                    archive,
                    "SELECT kind, count(*) FROM parts WHERE copy_id = ? AND role = 'agent' "
                    "AND NOT is_citation GROUP BY kind",
                    [copy_id],
                )
            )
        )
        citations = sorted(
            rows(
                archive,
                """
            SELECT study, period, source_column, source_table, source_function, base_n, valid, inferred
            FROM citations WHERE copy_id = ?""",
                [copy_id],
            ),
            key=str,
        )
        found[(key, rel(path))] = (state, terminal, claims, kinds["data"], kinds["text"], citations)
    expected = {}
    for result in MANIFEST["results"]:
        for copy in result["copies"]:
            citations = sorted(
                (
                    (
                        c["study"],
                        c["period"],
                        c["column"],
                        c["table"],
                        c["function"],
                        None if c["base_n"] is None else float(c["base_n"]),
                        c["valid"],
                        c["inferred"],
                    )
                    for c in copy["citations"]
                ),
                key=str,
            )
            state = copy["state"].lower().removeprefix("task_state_").replace("_", "-") if copy["state"] else None
            expected[(result["key"], copy["path"])] = (
                state,
                copy["terminal"],
                copy["claims"],
                copy["data_parts"],
                copy["text_parts"],
                citations,
            )
    assert found == expected


def test_agents_resolve_from_the_card_beside_the_transcripts(samples):
    archive, _ = samples
    assert sorted(rows(archive, "SELECT name, declares_extension, lists_media_type FROM agent_cards")) == sorted(
        (a["name"], a["declares_extension"], a["lists_media_type"]) for a in MANIFEST["agents"]
    )
    agents = dict(
        rows(
            archive,
            "SELECT r.result_key, any_value(a.agent) FROM results r "
            "JOIN result_agents a USING (copy_id) GROUP BY r.result_key",
        )
    )
    assert agents == {r["key"]: r["agent"] for r in MANIFEST["results"]}


@pytest.mark.slow
def test_reingesting_the_samples_adds_nothing(samples, tmp_path):
    _, summary = samples
    db = str(tmp_path / "twice.duckdb")
    runner = CliRunner()
    runner.invoke(main, ["ingest", str(SAMPLES), "--db", db])
    again = json.loads(runner.invoke(main, ["ingest", str(SAMPLES), "--db", db, "--json"]).stdout)
    assert (again["files_unchanged"], again["duplicates_skipped"]) == (summary["files"], summary["records"])
    assert (again["citations"], again["claims"]) == (summary["citations"], summary["claims"])
