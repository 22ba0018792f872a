"""The lineage queries over sample_transcripts/, checked against its manifest."""

from __future__ import annotations

from collections import defaultdict

import orjson
import pytest

from archiver.archive import Archive

from .transcripts import SAMPLES

pytestmark = pytest.mark.skipif(not (SAMPLES / "manifest.json").exists(), reason="samples not generated")


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    manifest = orjson.loads((SAMPLES / "manifest.json").read_bytes())
    with Archive.open(str(tmp_path_factory.mktemp("samples") / "a.duckdb")) as archive:
        archive.ingest(
            [str(SAMPLES / f["path"]) for f in manifest["files"]]
            + [str(SAMPLES / a["card"]) for a in manifest["agents"]],
            workers=1,
        )
        yield archive, manifest


def citing(manifest) -> dict[tuple, set[str]]:
    """(study, period, column, table, function, base_n, valid, inferred) -> keys of results citing it."""
    found = defaultdict(set)
    for result in manifest["results"]:
        for copy in result["copies"]:
            for c in copy["citations"]:
                found[
                    (
                        c["study"],
                        c["period"],
                        c["column"],
                        c["table"],
                        c["function"],
                        c["base_n"],
                        c["valid"],
                        c["inferred"],
                    )
                ].add(result["key"])
    return found


@pytest.mark.slow
def test_citations_match_manifest(samples):
    archive, manifest = samples
    got, inferred = defaultdict(int), set()
    for r in archive.citations():
        key = (
            r["study"],
            r["period"],
            r["source_column"],
            r["source_table"],
            r["source_function"],
            r["base_n"],
            r["valid"],
        )
        got[key] += r["results"]
        if r["inferred"]:  # one distinct citation; inferred when it lost its type in any copy
            inferred.add(key)
    expected = defaultdict(set)
    for key, results in citing(manifest).items():
        expected[key[:-1]] |= results
    assert set(got) == set(expected)
    assert all(got[k] >= len(v) for k, v in expected.items())
    assert {k[:-1] for k in citing(manifest) if k[-1]} == inferred


@pytest.mark.slow
def test_claims_by_study_match_manifest(samples):
    archive, manifest = samples
    by_study = defaultdict(set)
    for result in manifest["results"]:
        for copy in result["copies"]:
            for c in copy["citations"]:
                if max(cp["claims"] for cp in result["copies"]):
                    by_study[c["study"]].add(result["key"])
    for study, keys in by_study.items():
        got = {("task:" + r["task_id"]) if r["task_id"] else None for r in archive.claims(study=study)}
        expected = {k if k.startswith("task:") else None for k in keys}
        if None in got or None in expected:
            got.discard(None)
            expected.discard(None)
        assert got == expected, study


def test_uncited_results_have_uncited_claims(samples):
    archive, manifest = samples
    uncited = {
        r["key"]
        for r in manifest["results"]
        if not any(c["citations"] for c in r["copies"]) and any(c["claims"] for c in r["copies"])
    }
    got = {"task:" + r["task_id"] for r in archive.claims() if r["study"] is None and r["task_id"]}
    assert got == {k for k in uncited if k.startswith("task:")}


@pytest.mark.slow
def test_impact_agents_match_manifest(samples):
    archive, manifest = samples
    for agent in manifest["agents"]:
        keys = {
            r["key"]
            for r in manifest["results"]
            if r["agent"] == agent["name"] and any(c["citations"] for c in r["copies"])
        }
        rows = {(r["kind"], r["id"]) for r in archive.impact(agent=agent["name"])}
        tasks = {("task", k.removeprefix("task:")) for k in keys if k.startswith("task:")}
        assert {row for row in rows if row[0] == "task"} == tasks
        assert ({("agent", agent["name"])} if keys else set()) == {row for row in rows if row[0] == "agent"}


def test_inferred_and_invalid_match_planted(samples):
    archive, manifest = samples
    planted = defaultdict(set)
    for p in manifest["planted"]:
        planted[p["rule"]].add(p["key"])
    inferred = {"task:" + r["task_id"] for r in archive.claims(inferred=True) if r["task_id"]}
    assert planted["citation-type-lost"] <= inferred | {
        k for k in planted["citation-type-lost"] if not k.startswith("task:")
    }
    invalid = {"task:" + r["task_id"] for r in archive.claims(valid=False) if r["task_id"]}
    assert {k for k in planted["invalid-citation"] if k and k.startswith("task:")} <= invalid
