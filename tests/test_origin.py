"""Spool segments of `archiver record` (built from real SDK traffic by `tests.spool_segments`): recognised
by content, read exactly as the same JSON in a plain capture, and their copies are the origin copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archiver.archive import Archive
from tests.spool_segments import (
    SAMPLES,
    Stream,
    event_json,
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


@pytest.mark.slow
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
    assert recorded["results"] == plain["results"]
    assert recorded["results"]
    assert recorded["parts"] == plain["parts"]
    assert recorded["quarantined"] == plain["quarantined"]
    assert recorded["origins"] == [(str(tmp_path / "spool"),)]
    assert plain["origins"] == [(None,)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sample", "method"),
    [
        ("versant-insights/stream-v1.sse", "SendStreamingMessage"),
        ("sante-panel/stream-v1.sse", "SendStreamingMessage"),
        ("legacy-funnel/stream-v03.sse", "message/stream"),
        ("kestrel-mobility/stream-v1.sse", "SendStreamingMessage"),
        ("kestrel-mobility/v03-stream.sse", "message/stream"),
        ("legacy-funnel/rest-stream-v03.sse", None),
        ("kestrel-mobility/rest-stream-v1.sse", None),
    ],
)
def test_a_stream_segment_reads_as_the_same_stream_captured_plainly(tmp_path, sample, method):
    path = stream_segment(segment(tmp_path / "spool", 1, "sse"), [stream_of(sample, "s1", method)])
    plain = index(tmp_path / "plain.duckdb", SAMPLES / sample)
    recorded = index(tmp_path / "spool.duckdb", path)
    assert [r[:6] for r in recorded["results"]] == [r[:6] for r in plain["results"]]
    assert recorded["results"]
    assert recorded["parts"] == plain["parts"]
    assert recorded["quarantined"] == 0
    assert recorded["origins"] == [(str(tmp_path / "spool"),)]


def ingest(db: Path, *paths) -> None:
    with Archive.open(str(db)) as archive:
        archive.ingest([str(p) for p in paths])


def findings(db: Path, rule: str = "dropped-part") -> list:
    with Archive.open(str(db)) as archive:
        return [f for f in archive.audit().findings if f.rule == rule]


def rest_stream(spool: Path, seq: int = 1) -> Path:
    """The REST stream of task-vrs-rest-nps-main (its citation in an artifact of its own) through the proxy."""
    stream = stream_of(
        "versant-insights/rest-stream-v1.sse", "r1", None, binding="rest", path="/a2a/rest/message:stream"
    )
    return stream_segment(segment(spool, seq, "sse"), [stream])


@pytest.mark.slow
def test_a_consumer_lacking_a_part_the_agent_sent_names_the_origin_copy(tmp_path):
    origin = rest_stream(tmp_path / "spool")
    consumer = SAMPLES / "versant-insights/rest-list-tasks.json"  # ListTasks without artifacts
    db = tmp_path / "a.duckdb"
    ingest(db, origin, consumer)
    found = findings(db)
    assert found
    assert all(f.source_path == str(consumer) for f in found)
    cited = [f for f in found if f.severity == "error"]
    assert len(cited) == 1
    assert cited[0].detail.startswith(
        "the agent sent this Part; this completed copy of task task-vrs-rest-nps-main lacks it: the citation Part"
    )
    assert cited[0].detail.endswith(f"that the origin copy recorded in {origin} holds")
    assert all(f.reference == str(origin) for f in found)


@pytest.mark.slow
def test_an_origin_copy_is_never_said_to_lack_a_part(tmp_path):
    """The origin copy is the agent's words: a consumer holding more is no drop by the agent's copy."""
    origin = rest_stream(tmp_path / "spool")
    consumer = SAMPLES / "versant-insights/rest-list-tasks.json"
    db = tmp_path / "a.duckdb"
    ingest(db, origin, consumer)
    assert not [f for f in findings(db) if f.source_path == str(origin)]


def strip_citation(task_line: dict) -> dict:
    """A consumer's re-save of a GetTask/ListTasks answer without the citation Part (media type kept on others)."""
    stripped = json.loads(json.dumps(task_line))
    for task in stripped["result"]["tasks"]:
        for artifact in task.get("artifacts", []):
            artifact["parts"] = [p for p in artifact["parts"] if "citations" not in p.get("mediaType", "")]
    return stripped


@pytest.mark.slow
def test_a_partial_origin_copy_makes_no_claim_about_what_it_did_not_record(tmp_path):
    """The proxy saw only the start of the stream (the client went away): the citation that came later is
    not in the origin copy. A consumer lacking it is compared with the other consumer that holds it, in the
    words of the copies, not the agent's; the complete consumer copy is not said to lack anything."""
    partial = sample_events("versant-insights/stream-partial.sse")
    stream = Stream("p1", stream_request(partial), partial)
    origin = stream_segment(segment(tmp_path / "spool", 1, "sse"), [stream], end="client-disconnected")
    lines = sample_lines("versant-insights/rpc-v1.jsonl")
    listed = next(line for line in lines if "tasks" in line.get("result", {}))
    full = tmp_path / "consumers" / "full.json"
    full.parent.mkdir()
    full.write_text(json.dumps(listed))
    stripped = tmp_path / "consumers" / "stripped.json"
    stripped.write_text(json.dumps(strip_citation(listed)))
    db = tmp_path / "a.duckdb"
    ingest(db, origin, full, stripped)
    share = [f for f in findings(db) if f.task_id == "task-vrs-stream-share"]
    assert [(f.source_path, f.severity) for f in share] == [(str(stripped), "error")]
    assert "the agent sent" not in share[0].detail
    assert f"copy in {full} holds" in share[0].detail
    assert share[0].reference is None


@pytest.mark.slow
def test_a_stripped_media_type_is_type_lost_not_dropped(tmp_path):
    """A consumer that kept the citation's data but lost its media type (the 1.x server answering a 0.3
    client) holds the Part: citation-type-lost, no dropped-part."""
    origin = rest_stream(tmp_path / "spool")
    events = [event_json(e) for e in sample_events("versant-insights/rest-stream-v1.sse")]
    for event in events:
        for part in event.get("artifactUpdate", {}).get("artifact", {}).get("parts", []):
            part.pop("mediaType", None)
    consumer = tmp_path / "consumer" / "untyped.jsonl"
    consumer.parent.mkdir()
    consumer.write_text("".join(json.dumps(e) + "\n" for e in events))
    db = tmp_path / "a.duckdb"
    ingest(db, origin, consumer)
    assert findings(db) == []
    assert [f.source_path for f in findings(db, "citation-type-lost")] == [str(consumer)]


@pytest.mark.slow
def test_a_result_with_only_consumer_copies_gets_no_origin_claim(tmp_path):
    db = tmp_path / "a.duckdb"
    ingest(db, SAMPLES / "versant-insights/rest-stream-v1.sse", SAMPLES / "versant-insights/rest-list-tasks.json")
    found = findings(db)
    assert found
    assert not any("agent sent" in f.detail or f.reference for f in found)


def spool_of_split_traffic(spool: Path) -> list[Path]:
    """Four segments: two streams interleaved and split by rotation (each continued in the second), then
    v0.3 `message/send` exchanges in a third and their `tasks/get` in a fourth."""
    streams = [
        stream_of("versant-insights/stream-v1.sse", "s1"),
        stream_of("legacy-funnel/stream-v03.sse", "s2", "message/stream"),
    ]
    first = stream_segment(segment(spool, 1, "sse"), streams, events=2, end=None)
    second = stream_segment(segment(spool, 2, "sse"), streams, continued=True)
    unary = rpc_exchanges("legacy-funnel/rpc-v03.jsonl", "u", "0.3")
    sends = [e for e in unary if e["request"]["method"] == "message/send"]
    gets = [e for e in unary if e["request"]["method"] != "message/send"]
    assert sends
    assert gets
    return [first, second, unary_segment(segment(spool, 3), sends), unary_segment(segment(spool, 4), gets)]


def outputs(db: Path) -> dict:
    """What the commands say of an archive, as people and scripts read it."""
    from click.testing import CliRunner

    from archiver.cli import main

    said = {}
    for command in (
        ["stats", "--json"],
        ["audit", "--json"],
        ["query", "claims", "--json"],
        ["query", "citations", "--json"],
        ["query", "impact", "--json"],
    ):
        result = CliRunner().invoke(main, [*command, "--db", str(db)])
        said[" ".join(command)] = result.output
    return said


@pytest.mark.slow
def test_one_result_over_several_segments_is_one_origin_copy(tmp_path):
    segments = spool_of_split_traffic(tmp_path / "spool")
    db = tmp_path / "a.duckdb"
    ingest(db, *segments)
    with Archive.open(str(db)) as archive:
        stats = archive.stats()
        spread = archive.con.execute(
            "SELECT result_key, len(segments) FROM origin_copies WHERE len(segments) > 1 ORDER BY 1"
        ).fetchall()
    assert ("task:task-vrs-stream-consider", 2) in spread
    assert ("task:task-fnl-sse-channel", 2) in spread
    assert any(key.startswith("task:task-fnl-rpc") for key, _ in spread)  # the send, then the get
    assert stats["copies"] == stats["results"] == stats["origin_copies"] == stats["results_with_origin"]
    assert stats["quarantined"] == 0
    assert findings(db) == []
    said = outputs(db)
    audit = json.loads(said["audit --json"])
    assert audit["summary"]["copies"] == stats["results"]
    with Archive.open(str(db)) as archive:
        copies = archive.con.execute("SELECT DISTINCT copies FROM claim_citations").fetchall()
    assert copies == [(1,)]


@pytest.mark.slow
def test_segments_ingested_one_by_one_in_any_order_give_the_same_archive(tmp_path):
    segments = spool_of_split_traffic(tmp_path / "spool")
    consumer = SAMPLES / "versant-insights/rpc-v1.jsonl"
    at_once = tmp_path / "at-once.duckdb"
    ingest(at_once, *segments, consumer)
    one_by_one = tmp_path / "one-by-one.duckdb"
    for path in [segments[1], consumer, segments[3], segments[0], segments[2]]:
        ingest(one_by_one, path)
    again = outputs(one_by_one)
    ingest(one_by_one, tmp_path / "spool", consumer)  # idempotent
    expected = outputs(at_once)
    assert json.loads(expected["stats --json"])["origin_copies"] > 0
    assert outputs(one_by_one) == expected == again


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "html"])
def test_show_marks_the_origin_copy(tmp_path, fmt):
    origin = rest_stream(tmp_path / "spool")
    consumer = SAMPLES / "versant-insights/rest-list-tasks.json"
    db = tmp_path / "a.duckdb"
    ingest(db, origin, consumer)
    with Archive.open(str(db)) as archive:
        shown = archive.render("task-vrs-rest-nps-main", fmt)
        consumer_only = archive.render("task-vrs-rest-nps-main", fmt, copy=str(consumer))
    marked = [line for line in shown.splitlines() if "origin copy: recorded at the agent" in line]
    assert len(marked) == 1
    assert origin.name in marked[0]
    assert "lacks the citation Part" in shown
    assert origin.name not in " ".join(line for line in shown.splitlines() if "lacks" in line)
    assert consumer_only.count("origin copy: recorded at the agent") == 1  # the list of copies still says it


@pytest.mark.slow
def test_stats_counts_origin_copies(tmp_path):
    from click.testing import CliRunner

    from archiver.cli import main

    db = tmp_path / "a.duckdb"
    ingest(db, rest_stream(tmp_path / "spool"), SAMPLES / "versant-insights/rest-list-tasks.json")
    counts = json.loads(CliRunner().invoke(main, ["stats", "--json", "--db", str(db)]).output)
    assert (counts["results"], counts["copies"], counts["origin_copies"], counts["results_with_origin"]) == (1, 2, 1, 1)
    text = CliRunner().invoke(main, ["stats", "--db", str(db)]).output
    assert "origin_copies" in text.replace(" ", "_") or "origin copies" in text


@pytest.mark.slow
def test_a_malformed_envelope_is_quarantined_with_one_reason_naming_file_and_line(tmp_path):
    spool = tmp_path / "spool"
    good = rpc_exchanges("versant-insights/rpc-v1.jsonl", "x")
    unary = segment(spool, 1)
    lines = [
        json.dumps(good[0]),
        '{"a2a_record": 1, "kind": "exchange", "exchange": ',
        json.dumps({**good[1], "kind": "teleport"}),
    ]
    unary.write_text("\n".join(lines) + "\n")
    stream = stream_segment(segment(spool, 2, "sse"), [stream_of("versant-insights/stream-v1.sse", "s1")])
    data = stream.read_bytes().split(b"\n")
    data[1] = b": a2a-record {not json"
    stream.write_bytes(b"\n".join(data))
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        summary = archive.ingest([str(spool)])
    assert summary.quarantined == 3
    assert summary.problems[0].startswith(f"{unary}: line 2: invalid JSON")
    assert summary.problems[1] == f"{unary}: line 3: a2a-record envelope of unknown kind 'teleport'"
    assert summary.problems[2].startswith(f"{stream}: line 2: a2a-record envelope: invalid JSON")


@pytest.mark.slow
def test_open_segments_are_never_read(tmp_path):
    spool = tmp_path / "spool"
    closed = unary_segment(segment(spool, 1), rpc_exchanges("versant-insights/rpc-v1.jsonl", "x"))
    writing = spool / (segment(spool, 2).name + ".open")
    writing.write_text('{"a2a_record": 1, "kind": "exchange", "exch')  # half written
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        summary = archive.ingest([str(spool)])
        again = archive.ingest([str(spool / "*")])
        paths = [row[0] for row in archive.con.execute("SELECT path FROM sources").fetchall()]
    assert (summary.files, summary.quarantined, summary.unrecognised_files) == (1, 0, [])
    assert again.files == 1
    assert paths == [str(closed)]


@pytest.mark.slow
def test_sarif_names_the_origin_copy_as_a_related_location(tmp_path):
    from click.testing import CliRunner

    from archiver.cli import main

    origin = rest_stream(tmp_path / "spool")
    db = tmp_path / "a.duckdb"
    ingest(db, origin, SAMPLES / "versant-insights/rest-list-tasks.json")
    result = CliRunner().invoke(main, ["audit", "--format", "sarif", "--db", str(db)])
    dropped = [r for r in json.loads(result.output)["runs"][0]["results"] if r["ruleId"] == "dropped-part"]
    assert dropped
    for finding in dropped:
        assert finding["relatedLocations"] == [
            {
                "id": 1,
                "physicalLocation": {"artifactLocation": {"uri": origin.as_uri()}},
                "message": {"text": "the origin copy"},
            }
        ]
        assert "reference" not in finding["properties"]


@pytest.mark.slow
def test_an_uncited_origin_copy_over_two_segments_is_one_finding(tmp_path):
    """The agent's uncited answer, recorded as it was sent and again as a later get returned it."""
    spool = tmp_path / "spool"
    sent = [
        e
        for e in rpc_exchanges("versant-insights/rpc-v1.jsonl", "x")
        if e["request"]["method"] == "SendMessage" and "trend" in json.dumps(e["response"])
    ]
    assert len(sent) == 1
    again = {**sent[0], "exchange": "y-1"}
    segments = [unary_segment(segment(spool, 1), sent), unary_segment(segment(spool, 2), [again])]
    db = tmp_path / "a.duckdb"
    ingest(db, *segments)
    uncited = findings(db, "uncited-result")
    assert [(f.task_id, f.source_path) for f in uncited] == [("task-vrs-rpc-trend", str(segments[0]))]


@pytest.mark.slow
def test_the_parts_of_an_origin_copy_over_two_segments_are_found_and_counted_once(tmp_path):
    """The agent's answers recorded as they were sent and again as later calls returned them: one origin copy
    each, so the audit finds what it finds in the first segment alone, once (invalid citations, small bases),
    and `stats` counts its Parts, citations and claims once."""
    spool = tmp_path / "spool"
    sent = rpc_exchanges("legacy-funnel/rpc-v03.jsonl", "x", "0.3")
    again = [{**e, "exchange": f"y-{n}"} for n, e in enumerate(sent)]
    first, second = unary_segment(segment(spool, 1), sent), unary_segment(segment(spool, 2), again)
    alone, both = tmp_path / "alone.duckdb", tmp_path / "both.duckdb"
    ingest(alone, first)
    ingest(both, first, second)

    def said(db: Path) -> list[tuple]:
        with Archive.open(str(db)) as archive:
            report = archive.audit(min_base=10_000)
        return sorted(
            (f.rule, f.task_id, f.artifact_id, f.part_index, f.source_path, f.detail) for f in report.findings
        )

    found = said(both)
    assert {"invalid-citation", "small-base"} <= {rule for rule, *_ in found}
    assert found == said(alone)
    with Archive.open(str(alone)) as one, Archive.open(str(both)) as two:
        counted, recounted = one.stats(), two.stats()
    assert recounted["records"] == 2 * counted["records"]  # every record is kept, and counted
    for name in ("copies", "parts", "citations", "citations_invalid", "citations_inferred", "claims"):
        assert recounted[name] == counted[name], name
    assert min(counted["parts"], counted["citations"], counted["citations_invalid"], counted["claims"]) > 0


@pytest.mark.slow
@pytest.mark.parametrize("stripped_first", [False, True])
def test_a_media_type_lost_in_any_segment_of_an_origin_copy_is_found_whichever_sorts_first(tmp_path, stripped_first):
    """The agent's answers recorded as sent, and again as later calls returned them without the citations' media
    type: `citation-type-lost` is found whichever segment's name sorts first (only the first segment's row of a
    Part survived, so the lost type was found or missed by file name), and each other finding once."""
    sent = rpc_exchanges("legacy-funnel/rpc-v03.jsonl", "x", "0.3")
    untyped = json.loads(json.dumps(sent).replace('"mediaType"', '"kept"').replace('"mimeType"', '"kept"'))
    untyped = [{**e, "exchange": f"y-{n}"} for n, e in enumerate(untyped)]
    spool = tmp_path / "spool"
    first, second = (untyped, sent) if stripped_first else (sent, untyped)
    db = tmp_path / "a.duckdb"
    ingest(db, unary_segment(segment(spool, 1), first), unary_segment(segment(spool, 2), second))
    with Archive.open(str(db)) as archive:
        found = archive.audit().findings
    lost = sorted((f.task_id, f.artifact_id, f.part_index) for f in found if f.rule == "citation-type-lost")
    invalid = sorted((f.task_id, f.artifact_id, f.part_index) for f in found if f.rule == "invalid-citation")
    alone = tmp_path / "alone.duckdb"
    ingest(alone, unary_segment(segment(tmp_path / "typed", 1), sent))
    with Archive.open(str(alone)) as archive:
        cited = archive.con.execute("SELECT count(*) FROM citations WHERE NOT inferred").fetchone()[0]
        expected_invalid = sorted(
            (f.task_id, f.artifact_id, f.part_index) for f in archive.audit().findings if f.rule == "invalid-citation"
        )
    assert len(lost) == cited > 0  # every citation Part the agent sent lost its type in one segment
    assert invalid == expected_invalid
    assert invalid
