"""The samples of the independent A2A stacks are what the real libraries make: fasta2a 2.1.1 (with its
pydantic-ai bridge) and python-a2a 0.5.10, each in a venv of its own (made once with pip and cached), run
their generators again into a temporary folder, which must give the committed files byte for byte and the
manifest's entries for them; and the archive reads every one of them with no quarantine (issue 27)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from archiver.archive import Archive
from tests.transcripts import rows
from tests.venvs import cached_python

ROOT = Path(__file__).resolve().parent.parent
GENERATE = ROOT / "sample_transcripts" / "generate"
MANIFEST = json.loads((ROOT / "sample_transcripts" / "manifest.json").read_text(encoding="utf-8"))

STACKS = {
    "fasta2a": (["fasta2a==2.1.1", "pydantic-ai-slim==2.68.0", "httpx"], "make_samples_fasta2a.py"),
    "python_a2a": (["python-a2a==0.5.10"], "make_samples_python_a2a.py"),
}

pytestmark = pytest.mark.slow


def made_files(fragment: dict) -> list[str]:
    return [f["path"] for f in fragment["files"]] + [a["card"] for a in fragment["agents"]]


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_the_real_library_makes_the_committed_samples(stack, tmp_path):
    packages, generator = STACKS[stack]
    python = cached_python("stack", packages)
    environment = {**os.environ, "SAMPLES_OUT": str(tmp_path / "out"), "SAMPLES_FRAGMENTS": str(tmp_path / "frag")}
    subprocess.run([python, str(GENERATE / generator)], check=True, cwd=GENERATE, env=environment)
    fragment = json.loads((tmp_path / "frag" / f"{stack}.json").read_text(encoding="utf-8"))
    for path in made_files(fragment):
        assert (tmp_path / "out" / path).read_bytes() == (ROOT / "sample_transcripts" / path).read_bytes(), path
    assert all(item in MANIFEST["files"] for item in fragment["files"])
    assert all(item in MANIFEST["planted"] for item in fragment["planted"])
    with Archive.open(str(tmp_path / "made.duckdb")) as archive:
        archive.ingest([str(tmp_path / "out")])
        assert rows(archive, "SELECT count(*) FROM records WHERE status = 'quarantined'") == [(0,)]
        keys = {key for (key,) in rows(archive, "SELECT DISTINCT result_key FROM results")}
    assert keys == {result["key"] for result in fragment["results"]}
