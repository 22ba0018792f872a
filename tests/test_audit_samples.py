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
