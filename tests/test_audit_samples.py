"""Over sample_transcripts/, the audit reports exactly the problems the samples were made with.

The whole directory is ingested, as a user would (`archiver ingest sample_transcripts/`), and
verified against the sample data layer (`archiver verify`), which the re-run rules judge.
The samples describe themselves in sample_transcripts/manifest.json: the files
they hold, their agents' cards, their results, and a "planted" list of
{rule, severity, key, path, what}. A planted problem is matched on rule, result
key and file (an agent-card problem has no key: rule and file).
"""

from __future__ import annotations

import orjson
import pytest

from tests.transcripts import SAMPLES

MANIFEST = SAMPLES / "manifest.json"

pytestmark = pytest.mark.skipif(not MANIFEST.exists(), reason=f"{MANIFEST} does not exist yet: no samples to audit")


@pytest.fixture(scope="module")
def manifest() -> dict:
    return orjson.loads(MANIFEST.read_bytes())


@pytest.fixture(scope="module")
def report(manifest, samples_copy):
    from archiver.archive import Archive

    with Archive.open(samples_copy) as archive:
        archive.verify(str(SAMPLES / "data-layer" / "archiver-data-layer.toml"))  # rerun-differs, not-rerunnable
        yield archive.audit()


def _relative(path: str) -> str:
    return path.removeprefix(str(SAMPLES) + "/")


@pytest.mark.slow
def test_audit_reports_exactly_the_planted_problems(manifest, report):
    planted = {(p["rule"], p["key"], p["path"]) for p in manifest["planted"]}
    found = {(f.rule, f.result_key, _relative(f.source_path)) for f in report.findings}
    assert found - planted == set(), "findings the samples were not made with"
    assert planted - found == set(), "planted problems the audit missed"


@pytest.mark.slow
def test_summary_matches_the_samples(manifest, report):
    results = manifest["results"]
    summary = report.summary
    assert summary["results"] == len(results)
    assert summary["copies"] == sum(len(r["copies"]) for r in results)
    assert summary["quantitative_results"] == sum(any(c["claims"] for c in r["copies"]) for r in results)
    assert summary["cited_results"] == sum(any(c["citations"] for c in r["copies"]) for r in results)


@pytest.mark.slow
def test_stats_leads_with_the_validly_cited_figure_of_the_audit(samples_archive, tmp_path):
    """`stats` had 27 counts and not the one a reader asks first (issue 41): how many quantitative results are
    validly cited, overall, per agent and per study, as the audit's summary counts them."""
    import json
    import shutil

    from click.testing import CliRunner

    from archiver.archive import Archive
    from archiver.audit.summary import cited_figure
    from archiver.cli import main

    samples_copy = str(shutil.copyfile(samples_archive, tmp_path / "archive.duckdb"))
    with Archive.open(samples_copy, read_only=True) as archive:
        summary = archive.audit().summary
    table = CliRunner().invoke(main, ["stats", "--db", samples_copy, "--csv"]).output.splitlines()
    assert table[1] == f"validly_cited_results,{summary['validly_cited_results']},{cited_figure(summary)}"
    agent = next(g for g in summary["per_agent"] if g["agent"] and g["quantitative_results"])
    assert f"agent,{agent['validly_cited_results']},{agent['agent']}: {cited_figure(agent)}" in table
    assert any(line.startswith("study,0,(no study): 0 of ") for line in table)
    shown = json.loads(CliRunner().invoke(main, ["stats", "--db", samples_copy, "--json"]).output)
    assert shown["validly_cited"]["per_study"] == summary["per_study"]
    assert shown["validly_cited"]["validly_cited_share"] == summary["validly_cited_share"]


@pytest.mark.slow
def test_the_audit_summary_says_what_each_count_counts(report):
    """ "13 uncited-result" counted stored copies beside "cited 59" counting results, unlabelled (issue 41)."""
    from archiver.audit.summary import cited_figure
    from archiver.render.findings import FINDINGS_COUNTED, summary_text

    lines = summary_text(report.summary).splitlines()
    assert lines[1].startswith(f"{cited_figure(report.summary)}  results cited {report.summary['cited_results']}  ")
    assert lines[2].startswith(f"{FINDINGS_COUNTED}: uncited-result ")
