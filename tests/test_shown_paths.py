"""Source paths as people read them (issue 41, item 2): relative to the working directory where they lie
beneath it, as `audit` shows them, in every output for people (the terminal's tables, Markdown, the web
view's cells); the machine formats keep the stored, absolute path. Before, `query impact` and the web
printed `/work/.../sample_transcripts/versant-insights/stream-v1.sse` where `audit` printed
`sample_transcripts/versant-insights/stream-v1.sse`."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from archiver.cli import main
from archiver.render.paths import display_path, shown_field
from tests.transcripts import SAMPLES

STREAM = str(SAMPLES / "versant-insights" / "stream-v1.sse")


def test_a_path_field_is_shown_relative_and_nothing_else_is(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    assert shown_field({"source_path": STREAM}, "source_path") == "sample_transcripts/versant-insights/stream-v1.sse"
    relative = "sample_transcripts/versant-insights/stream-v1.sse"
    assert shown_field({"kind": "source_file", "id": STREAM}, "id") == relative
    assert shown_field({"kind": "task", "id": STREAM}, "id") == STREAM
    assert shown_field({"pointer": "/total"}, "pointer") == "/total"
    monkeypatch.chdir(SAMPLES / "versant-insights")
    assert shown_field({"source_path": STREAM}, "source_path") == "stream-v1.sse"
    monkeypatch.chdir("/tmp")
    assert display_path(STREAM) == STREAM


def impact(db: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["query", "impact", "--study", "Versant Mega Tracker", "--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_query_impact_shows_paths_as_audit_does_and_json_keeps_them_whole(samples_copy, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    relative = os.path.relpath(STREAM)
    table = impact(samples_copy, "--format", "table")
    assert f"source_file  {relative}  " in table
    assert STREAM not in table
    assert f"| source_file | {relative} |" in impact(samples_copy, "--format", "markdown")
    assert f"source_file,{STREAM}," in impact(samples_copy, "--format", "csv")
    rows = json.loads(impact(samples_copy, "--format", "json"))
    assert {"kind": "source_file", "id": STREAM, "claims": 4, "results": 1, "citations": 1} in rows
    audit = CliRunner().invoke(main, ["audit", "--db", samples_copy, "--fail-on", "never", "--format", "table"])
    assert "  sample_transcripts/" in audit.output
    assert str(SAMPLES) not in audit.output


def test_ingest_names_a_quarantined_file_as_it_was_given(tmp_path, monkeypatch):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"x": 1}\nnot json\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["ingest", "in", "--db", "a.duckdb", "--no-progress"])
    assert result.exit_code == 1
    said = result.stderr.splitlines()
    assert "quarantined: in/a.jsonl: line 1: no A2A object recognised (keys: x)" in said
    assert "warning: in/a.jsonl: no A2A object recognised in this file" in said
    assert str(tmp_path) not in result.stderr
