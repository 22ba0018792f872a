"""The samples of the official Go A2A SDK (github.com/a2aproject/a2a-go/v2, pinned by
sample_transcripts/generate/go/go.sum) are what the real SDK makes: its generator, run again into a
temporary folder with `go run`, gives the committed files byte for byte and the manifest's entries for
them; and the archive reads every one of them (JSON-RPC and REST wire logs, SSE, the client's objects, the
SDK's slog lines, ProtoJSON of its gRPC messages, the saved task store) with no quarantine and no record
it does not understand, finding exactly the problems planted in them (issue 27).

Skipped without `go`; the first run downloads the pinned modules from the Go module proxy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from archiver.archive import Archive
from tests.transcripts import SAMPLES, rows

GENERATOR = SAMPLES / "generate" / "go"
MANIFEST = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The generator's files and its manifest fragment, made afresh by the real SDK."""
    where = tmp_path_factory.mktemp("go-sdk")
    environment = {**os.environ, "SAMPLES_OUT": str(where / "out"), "SAMPLES_FRAGMENTS": str(where / "frag")}
    subprocess.run(["go", "run", "."], check=True, cwd=GENERATOR, env=environment, timeout=900)
    fragment = json.loads((where / "frag" / "go.json").read_text(encoding="utf-8"))
    return where, fragment


def test_the_real_sdk_makes_the_committed_samples(made):
    where, fragment = made
    paths = [f["path"] for f in fragment["files"]] + [a["card"] for a in fragment["agents"]]
    assert len(paths) == 11
    for path in paths:
        assert (where / "out" / path).read_bytes() == (SAMPLES / path).read_bytes(), path
    committed = {p.relative_to(SAMPLES).as_posix() for p in (SAMPLES / "go-osprey-energy").iterdir()}
    assert committed == set(paths)


def test_the_manifest_holds_the_fragment(made):
    _, fragment = made
    for section in ["files", "agents", "results", "planted"]:
        missing = [item for item in fragment[section] if item not in MANIFEST[section]]
        assert missing == [], section
    assert {p["rule"] for p in fragment["planted"]} == {
        "uncited-result",
        "invalid-citation",
        "citation-type-lost",
        "dropped-part",
    }


def test_every_record_is_understood_and_only_the_planted_problems_are_found(made, tmp_path):
    where, fragment = made
    with Archive.open(str(tmp_path / "made.duckdb")) as archive:
        summary = archive.ingest([str(where / "out")])
        assert summary.quarantined == 0, summary.problems
        assert rows(archive, "SELECT count(*) FROM records WHERE yields = 'nothing'") == [(0,)]
        keys = {key for (key,) in rows(archive, "SELECT DISTINCT result_key FROM results")}
        found = {
            (f.rule, f.result_key, os.path.relpath(f.source_path, where / "out")) for f in archive.audit().findings
        }
    assert keys == {result["key"] for result in fragment["results"]}
    assert found == {(p["rule"], p["key"], p["path"]) for p in fragment["planted"]}


def test_what_each_go_container_yields(made, tmp_path):
    """The SDK's log holds only requests (it never logs a response), the gRPC log's GetTaskRequest is a
    request, and each StoredTask line (Go's untagged field names: `Task`, `Version`, `User`) is its Task."""
    where, _ = made
    with Archive.open(str(tmp_path / "made.duckdb")) as archive:
        archive.ingest([str(where / "out")])
        yields = rows(
            archive,
            "SELECT regexp_extract(source_path, '[^/]+$'), yields, count(*) FROM records GROUP BY ALL ORDER BY ALL",
        )
    assert [row for row in yields if row[0] in {"sdk-log.jsonl", "grpc-protojson.jsonl", "stored-tasks.jsonl"}] == [
        ("grpc-protojson.jsonl", "request", 1),
        ("grpc-protojson.jsonl", "result", 6),
        ("grpc-protojson.jsonl", "status", 1),
        ("grpc-protojson.jsonl", "user-message", 2),
        ("sdk-log.jsonl", "request", 8),
        ("sdk-log.jsonl", "user-message", 4),
        ("stored-tasks.jsonl", "result", 2),
    ]
