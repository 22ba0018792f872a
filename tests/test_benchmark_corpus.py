"""The benchmark's corpus generator: deterministic, and its ground truth is what ingest and audit find."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchmarks.generate import KINDS, generate


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    return folder, generate(folder, 1200, seed=11, tasks_per_file=40)


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_other_bytes(corpus, tmp_path):
    folder, truth = corpus
    again = generate(tmp_path / "again", 1200, seed=11, tasks_per_file=40)
    assert again == truth
    assert digest(tmp_path / "again") == digest(folder)
    other = generate(tmp_path / "other", 1200, seed=12, tasks_per_file=40)
    assert digest(tmp_path / "other") != digest(folder)
    assert other["claims"] != truth["claims"]


def test_the_corpus_mixes_every_dialect_and_plants_every_problem(corpus):
    _, truth = corpus
    assert set(truth["files_by_kind"]) == set(KINDS)
    assert set(truth["planted"]) == {"uncited-result", "invalid-citation", "small-base", "citation-type-lost"}
    assert 1 * truth["tasks"] <= truth["claims"] <= 20 * truth["tasks"]


@pytest.mark.slow
def test_ingest_and_audit_find_exactly_the_ground_truth(corpus, archive):
    folder, truth = corpus
    summary = archive.ingest([str(folder)])
    assert summary.quarantined == 0
    assert summary.unrecognised_files == []
    assert (summary.files, summary.records, summary.tasks, summary.citations, summary.claims) == (
        truth["files"],
        truth["records"],
        truth["tasks"],
        truth["citations"],
        truth["claims"],
    )
    findings = archive.audit().summary["findings"]
    assert {rule: count for rule, count in findings.items() if count} == truth["planted"]
