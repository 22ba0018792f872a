"""The recording proxy's reading of the traffic (`archiver.record.wire`), its segment writer on its own, and
the command line's refusals."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.cli import main
from archiver.record.segments import SegmentWriter, SpoolSettings, envelope, stream_end
from archiver.record.wire import EventSplitter, binding_of, forwarded, protocol_of, recorded_headers
from tests.record_support import read_spool


@pytest.mark.parametrize(
    ("path", "request_body", "binding"),
    [
        ("/.well-known/agent-card.json", None, "card"),
        ("/.well-known/agent.json", None, "card"),
        ("/a2a/jsonrpc", {"jsonrpc": "2.0", "method": "SendMessage"}, "jsonrpc"),
        ("/a2a/jsonrpc", {"jsonrpc": "2.0", "method": "CreateTaskPushNotificationConfig"}, "push-config"),
        ("/a2a/jsonrpc", {"jsonrpc": "2.0", "method": "tasks/pushNotificationConfig/set"}, "push-config"),
        ("/a2a/jsonrpc", {"jsonrpc": "2.0", "method": "GetExtendedAgentCard"}, "card"),
        ("/a2a/rest/message:send", {"message": {}}, "rest"),
        ("/a2a/rest/v1/message:stream", {"message": {}}, "rest"),
        ("/a2a/rest/tasks/t1", None, "rest"),
        ("/a2a/rest/tasks/t1/pushNotificationConfigs", {"url": "http://hook"}, "push-config"),
        ("/healthz", None, "other"),
    ],
)
def test_binding_by_path_and_method(path, request_body, binding):
    assert binding_of(path, request_body) == binding


def test_protocol_by_header_then_method_then_path():
    assert protocol_of("/a2a/jsonrpc", {"method": "message/send"}, b"1.0") == "1.0"
    assert protocol_of("/a2a/jsonrpc", {"method": "message/send"}, None) == "0.3"
    assert protocol_of("/a2a/jsonrpc", {"method": "SendMessage"}, None) == "1.0"
    assert protocol_of("/a2a/rest/v1/message:send", {"message": {}}, None) == "0.3"
    assert protocol_of("/a2a/rest/message:send", {"message": {}}, None) is None


def test_hop_by_hop_headers_are_not_forwarded_and_credentials_not_recorded():
    headers = [
        (b"Connection", b"keep-alive, X-Hop"),
        (b"X-Hop", b"1"),
        (b"Host", b"proxy"),
        (b"Authorization", b"t"),
        (b"Content-Type", b"application/json"),
        (b"A2A-Version", b"1.0"),
        (b"Transfer-Encoding", b"chunked"),
    ]
    assert forwarded(headers) == [
        (b"Authorization", b"t"),
        (b"Content-Type", b"application/json"),
        (b"A2A-Version", b"1.0"),
    ]
    assert recorded_headers(headers) == {"content-type": "application/json", "a2a-version": "1.0"}


def test_events_are_cut_where_they_end_whatever_the_chunks():
    stream = b': hello\r\n\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: keep-alive\n\nevent: x\rdata: 2\r\r'
    expected = [b'id: 1\ndata: {"a":\ndata: 1}\n\n', b"event: x\ndata: 2\n\n"]
    for size in (1, 2, 3, 7, len(stream)):
        splitter = EventSplitter(cap=1000)
        events = [e for i in range(0, len(stream), size) for e in splitter.feed(stream[i : i + size])]
        assert events == expected, size


def test_an_event_over_the_cap_is_left_out_and_counted():
    splitter = EventSplitter(cap=20)
    events = splitter.feed(b"data: " + b"x" * 50 + b"\n\ndata: small\n\n")
    assert (events, splitter.oversized) == ([b"data: small\n\n"], 1)


def test_a_stream_spanning_segments_repeats_its_opening_and_an_empty_segment_is_not_closed(tmp_path):
    closed = []
    writer = SegmentWriter(SpoolSettings(tmp_path, "0badcafe", segment_bytes=300), closed.append)
    opening = {"a2a_record": 1, "kind": "stream-open", "exchange": "e1", "status": 200, "request": None}
    writer.stream_open(opening)
    for seq in range(4):
        writer.event("e1", seq, 1796083200.25, f"data: {seq}\n\n".encode())
    writer.close()
    stream = read_spool(tmp_path)["streams"]["e1"]
    assert len(closed) == len(stream["opens"]) > 1
    assert [o.get("continued") for o in stream["opens"]] == [None] + [True] * (len(closed) - 1)
    assert [e for _, _, e in stream["events"]] == [f"data: {n}\n\n".encode() for n in range(4)]
    assert {at for _, at, _ in stream["events"]} == {"2026-12-01T00:00:00.250000Z"}
    assert stream["end"]["end"] == "proxy-shutdown"
    assert stream["end"]["events"] == 4
    empty = SegmentWriter(SpoolSettings(tmp_path / "empty", "0badcafe"))
    empty.rotate_old()
    empty.close()
    assert list((tmp_path / "empty").glob("rec-*")) == []


def test_a_streams_envelopes_are_written_byte_for_byte_as_built_in_one_place(tmp_path):
    """Every envelope is built by `envelope` (the proxy's exchange, stream-open and stream-end, the writer's
    event and its proxy-shutdown stream-end): the version and kind first, then the fields in their order."""
    writer = SegmentWriter(SpoolSettings(tmp_path, "0badcafe"))
    at = "2026-12-01T00:00:00.000000Z"
    writer.stream_open(envelope("stream-open", exchange="e1", time=at, status=200, request=None))
    writer.event("e1", 0, 1796083200.25, b"data: {}\n\n")
    writer.close(at="2026-12-01T00:00:01.000000Z")
    (segment,) = tmp_path.glob("rec-*.sse")
    assert segment.read_bytes() == (
        b': a2a-record {"a2a_record":1,"kind":"stream-open","exchange":"e1","time":"2026-12-01T00:00:00.000000Z",'
        b'"status":200,"request":null}\n'
        b': a2a-record {"a2a_record":1,"kind":"event","exchange":"e1","seq":0,"time":"2026-12-01T00:00:00.250000Z"}\n'
        b"data: {}\n\n"
        b': a2a-record {"a2a_record":1,"kind":"stream-end","exchange":"e1","time":"2026-12-01T00:00:01.000000Z",'
        b'"events":1,"status":200,"end":"proxy-shutdown"}\n'
    )
    assert orjson.dumps(stream_end("e1", at, 2, 200, "complete")) == (
        b'{"a2a_record":1,"kind":"stream-end","exchange":"e1","time":"2026-12-01T00:00:00.000000Z","events":2,'
        b'"status":200,"end":"complete"}'
    )


def test_the_spool_contract_shows_the_envelopes_keys_in_the_order_they_are_written(tmp_path):
    """docs/record.md's event and stream-end lines have the keys the writer writes, in its order."""
    shown = (Path(__file__).resolve().parent.parent / "docs" / "record.md").read_text(encoding="utf-8")
    writer = SegmentWriter(SpoolSettings(tmp_path, "0badcafe"))
    writer.stream_open(envelope("stream-open", exchange="e1", status=200))
    writer.event("e1", 0, 1796083200.25, b"data: {}\n\n")
    writer.close()
    (segment,) = tmp_path.glob("rec-*.sse")
    keys = {}
    for line in re.findall(r"^: a2a-record (\{.*\})$", shown + segment.read_text(), re.M):
        if '"kind":"event"' in line or '"kind":"stream-end"' in line:
            keys.setdefault(orjson.loads(line)["kind"], []).append(list(orjson.loads(line)))
    event = ["a2a_record", "kind", "exchange", "seq", "time"]
    ending = ["a2a_record", "kind", "exchange", "time", "events", "status", "end"]
    assert keys == {"event": [event] * 3, "stream-end": [ending] * 2}  # the docs' two and one, then the writer's


@pytest.mark.slow
def test_one_proxy_per_spool_and_what_a_killed_one_left_open_is_closed_into_place(tmp_path):
    """A second proxy on a spool in use is refused; a proxy starting on a spool whose last proxy was killed
    closes the segments it left open (an empty one deleted), so that the ingest reads them: the whole records
    as written, and a record the kill cut short quarantined, naming what was lost."""
    from archiver.archive import Archive
    from archiver.errors import UsageError

    first = SegmentWriter(SpoolSettings(tmp_path, "0badcafe"))
    with pytest.raises(UsageError, match="is in use by another archiver record"):
        SegmentWriter(SpoolSettings(tmp_path, "0badcafe"))
    first.exchange({"a2a_record": 1, "kind": "exchange", "exchange": "x1", "binding": "card", "status": 200,
                    "request": None, "response": {"name": "Quant agent"}})  # fmt: skip
    torn = b'{"a2a_record": 1, "kind": "exchange", "exchange": "x2", "resp'
    first.current["jsonl"].write(torn)  # the kill cuts the next record short
    left, empty = first.current["jsonl"].path, tmp_path / "rec-20261201T000000000000-0badcafe-000009.sse"
    Path(f"{empty}.open").touch()
    os.close(first.lock)  # killed: no close

    second = SegmentWriter(SpoolSettings(tmp_path, "feedf00d"))
    assert second.recovered == [left]
    assert sorted(p.name for p in tmp_path.glob("rec-*")) == [left.name]
    second.close()
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        archive.ingest([str(tmp_path)])
        lost = archive.con.execute("SELECT source_path, line FROM records WHERE status = 'quarantined'").fetchall()
    assert lost == [(str(left), 2)]


def test_the_command_refuses_a_bad_upstream_or_listen_address_in_one_line():
    refused = CliRunner().invoke(main, ["record", "--upstream", "agent:9000"])
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines()[-1].endswith("agent:9000 is no http:// or https:// URL")
    refused = CliRunner().invoke(main, ["record", "--upstream", "http://agent", "--listen", "8787"])
    assert refused.exit_code == 2
    assert "8787 is not HOST:PORT" in refused.output


def test_the_command_refuses_a_spool_or_alerts_file_it_cannot_make_in_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")
    refused = CliRunner().invoke(
        main, ["record", "--upstream", "http://127.0.0.1:9", "--spool", str(tmp_path / "a-file" / "spool")]
    )
    assert refused.exit_code == 2
    assert f"the spool folder {tmp_path / 'a-file' / 'spool'} cannot be made: Not a directory" in refused.output
    assert "Traceback" not in refused.output
    alerts = tmp_path / "no-folder" / "alerts.jsonl"
    args = ["record", "--upstream", "http://127.0.0.1:9", "--spool", str(tmp_path / "spool"), "--alerts", str(alerts)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert f"the alerts file {alerts} cannot be opened: No such file or directory" in refused.output
