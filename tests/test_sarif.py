"""SARIF of the sample corpus, byte for byte: any change to the SARIF an audit writes shows here, and in
review as a change of tests/snapshots/audit.sarif.

After a deliberate change, rewrite the snapshot and review its diff:

    ARCHIVER_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_sarif.py
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import archiver
from archiver.cli import main
from tests.transcripts import SAMPLES

SNAPSHOT = Path(__file__).parent / "snapshots" / "audit.sarif"
UPDATE = os.environ.get("ARCHIVER_UPDATE_SNAPSHOTS") == "1"

pytestmark = pytest.mark.skipif(not (SAMPLES / "manifest.json").exists(), reason="samples not generated")


@pytest.fixture(scope="module")
def samples_db(samples_copy) -> str:
    return samples_copy  # not verified: a verdict's sentence holds the moment it was made


def sarif(db: str, *options: str) -> bytes:
    """`archiver audit --format sarif` run from the repository's root, its working directory written as
    file:///CWD in URIs and CWD in the findings' stored paths (the only parts of the document that depend
    on where the repository is)."""
    result = CliRunner().invoke(main, ["audit", "--format", "sarif", "--fail-on", "never", "--db", db, *options])
    assert result.exit_code == 0, result.output
    written = result.stdout_bytes.replace(Path.cwd().as_uri().encode(), b"file:///CWD")
    return written.replace(f"{Path.cwd()}/".encode(), b"CWD/")


@pytest.mark.slow
def test_sarif_of_the_samples_equals_the_snapshot(samples_db, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    monkeypatch.setattr(archiver.version, "__version__", "0.0.0")  # a release does not change the snapshot
    written = sarif(samples_db)
    if UPDATE:
        SNAPSHOT.write_bytes(written)
    assert written == SNAPSHOT.read_bytes(), "SARIF changed: see this module's docstring to update the snapshot"


@pytest.mark.slow
def test_sarif_is_sarif(samples_db, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    document = orjson.loads(sarif(samples_db))
    (run,) = document["runs"]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert document["version"] == "2.1.0"
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
        assert len(result["partialFingerprints"]["archiverFinding/v1"]) == 32
        for location in result.get("locations", []):
            artifact = location["physicalLocation"]["artifactLocation"]
            assert artifact["uriBaseId"] == "CWD"
            assert (SAMPLES.parent / artifact["uri"]).is_file()


def test_sarif_without_findings(samples_db, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    (run,) = orjson.loads(sarif(samples_db, "--study", "no such study"))["runs"]
    assert run["results"] == []
    assert run["properties"]["summary"]["findings_by_severity"] == {"error": 0, "warning": 0}
