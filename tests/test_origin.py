"""Spool segments of `archiver record` (built from real SDK traffic by `tests.spool_segments`): recognised
by content, read exactly as the same JSON in a plain capture, and their copies are the origin copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from archiver.archive import Archive
from tests.spool_segments import (
    SAMPLES,
    Stream,
    exchange,
    rpc_exchanges,
    sample_events,
    sample_lines,
    stream_request,
    stream_segment,
    unary_segment,
)

SEGMENT = "rec-20261130T174000000000-0a1b2c3d-{:06d}.{}"

RESULT_COLUMNS = "result_key, kind, task_id, context_id, state, terminal, claims"
PART_COLUMNS = "result_key, role, location, artifact_id, part_index, kind, media_type, content_hash, is_citation"


def segment(spool: Path, seq: int, kind: str = "jsonl") -> Path:
    spool.mkdir(parents=True, exist_ok=True)
    return spool / SEGMENT.format(seq, kind)


def index(db: Path, *paths) -> dict:
    """What the archive knows of its results and Parts (not where they were stored)."""
    with Archive.open(str(db)) as archive:
        archive.ingest([str(p) for p in paths])
        con = archive.con
        return {
            "results": sorted(con.execute(f"SELECT {RESULT_COLUMNS} FROM results").fetchall(), key=repr),
            "parts": sorted(con.execute(f"SELECT {PART_COLUMNS} FROM parts").fetchall(), key=repr),
            "quarantined": con.execute("SELECT count(*) FROM records WHERE status = 'quarantined'").fetchone()[0],
            "origins": sorted(set(con.execute("SELECT origin FROM results").fetchall()), key=repr),
        }


def stream_of(name: str, exchange_id: str, method: str = "SendStreamingMessage", **fields) -> Stream:
    events = sample_events(name)
    return Stream(exchange_id, stream_request(events, method), events, **fields)


@pytest.mark.parametrize(
    ("sample", "protocol"),
    [
        ("versant-insights/rpc-v1.jsonl", "1.0"),
        ("legacy-funnel/rpc-v03.jsonl", "0.3"),
        ("versant-insights/compat-v03-rpc.jsonl", "0.3"),
        ("kestrel-mobility/rpc-v1.jsonl", "1.0"),
        ("kestrel-mobility/v03-rpc.jsonl", "0.3"),
    ],
)
def test_a_unary_segment_reads_as_the_same_traffic_in_a_plain_log(tmp_path, sample, protocol):
    path = unary_segment(segment(tmp_path / "spool", 1), rpc_exchanges(sample, "x", protocol))
    plain = index(tmp_path / "plain.duckdb", SAMPLES / sample)
    recorded = index(tmp_path / "spool.duckdb", path)
    assert recorded["results"] == plain["results"] and recorded["results"]
    assert recorded["parts"] == plain["parts"]
    assert recorded["quarantined"] == plain["quarantined"]
    assert recorded["origins"] == [(str(tmp_path / "spool"),)]
    assert plain["origins"] == [(None,)]


@pytest.mark.parametrize(
    ("sample", "method"),
    [
        ("versant-insights/stream-v1.sse", "SendStreamingMessage"),
        ("sante-panel/stream-v1.sse", "SendStreamingMessage"),
        ("legacy-funnel/stream-v03.sse", "message/stream"),
        ("kestrel-mobility/stream-v1.sse", "SendStreamingMessage"),
        ("kestrel-mobility/v03-stream.sse", "message/stream"),
    ],
)
def test_a_stream_segment_reads_as_the_same_stream_captured_plainly(tmp_path, sample, method):
    path = stream_segment(segment(tmp_path / "spool", 1, "sse"), [stream_of(sample, "s1", method)])
    plain = index(tmp_path / "plain.duckdb", SAMPLES / sample)
    recorded = index(tmp_path / "spool.duckdb", path)
    assert [r[:6] for r in recorded["results"]] == [r[:6] for r in plain["results"]] and recorded["results"]
    assert recorded["parts"] == plain["parts"]
    assert recorded["quarantined"] == 0
    assert recorded["origins"] == [(str(tmp_path / "spool"),)]
