"""From the wire to the audit: the real a2a-sdk 1.3.0 client and server talk through `archiver record`, the
spool it writes is ingested, and the archive holds exactly what the client received, as origin copies; a
consumer's copy that dropped a Part is then named against the origin copy."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

import orjson
import pytest

from archiver.archive import Archive
from archiver.record.serve import ProxyThread, RecordOptions
from tests.record_support import CIT_MT, TeeTransport
from tests.servers import free_port
from tests.test_record import converse, start_agent

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

BINDINGS = [
    ("JSONRPC", "1.0", True),
    ("HTTP+JSON", "1.0", False),
    ("JSONRPC", "0.3", False),
    ("HTTP+JSON", "0.3", True),
]
PART_COLUMNS = "result_key, role, location, artifact_id, part_index, kind, media_type, content_hash"
RESULT_COLUMNS = "result_key, kind, task_id, context_id, state, terminal"


def record(tmp_path: Path, case: tuple = BINDINGS[0], **options) -> tuple[Path, list[dict]]:
    """The scripted conversation through a recording proxy; the spool and what the client got."""
    spool, tee = tmp_path / "spool", TeeTransport()
    with ExitStack() as stack:
        upstream = start_agent(stack)
        proxy = ProxyThread(RecordOptions(upstream.url, spool, port=free_port(), **options)).start()
        stack.callback(proxy.stop)
        asyncio.run(converse(f"http://127.0.0.1:{proxy.server.config.port}", *case, tee))
    return spool, tee.log


def client_copies(wire: list[dict], folder: Path) -> list[Path]:
    """What the client received, each response body saved as it came (a JSON document or an SSE capture); the
    push-notification configurations are left out (no result, and alone in a file no A2A object either)."""
    folder.mkdir()
    saved = []
    for n, entry in enumerate(wire):
        if b"ushNotificationConfig" in entry["path"].encode() + entry["request"]:
            continue
        stream = entry["content_type"].startswith("text/event-stream")
        path = folder / (f"{n:03d}.sse" if stream else f"{n:03d}.json")
        path.write_bytes(entry["response"])
        saved.append(path)
    return saved


def held(db: Path, *paths: Path) -> dict:
    with Archive.open(str(db)) as archive:
        if paths:
            archive.ingest([str(p) for p in paths])
        con = archive.con
        return {
            "results": set(con.execute(f"SELECT {RESULT_COLUMNS} FROM results").fetchall()),
            "parts": set(con.execute(f"SELECT {PART_COLUMNS} FROM parts").fetchall()),
            "quarantined": con.execute("SELECT count(*) FROM records WHERE status = 'quarantined'").fetchone()[0],
            "origin": set(con.execute("SELECT origin FROM results").fetchall()),
            "stats": archive.stats(),
        }


@pytest.mark.parametrize("case", BINDINGS)
def test_the_archive_of_the_spool_holds_what_the_client_received_as_origin_copies(tmp_path, case):
    spool, wire = record(tmp_path, case)
    from_spool = held(tmp_path / "spool.duckdb", spool)
    from_client = held(tmp_path / "client.duckdb", *client_copies(wire, tmp_path / "client"))

    assert from_spool["quarantined"] == from_client["quarantined"] == 0
    # what the client received, and besides only what it sent: the user's message of a message exchange
    assert from_client["parts"] <= from_spool["parts"]
    assert {part[1] for part in from_spool["parts"] - from_client["parts"]} <= {"user"}
    assert from_spool["results"] == from_client["results"]
    assert len(from_spool["results"]) == 5  # two messages, three tasks
    assert from_spool["origin"] == {(str(spool),)}  # the spool each origin copy was recorded in
    assert from_client["origin"] == {(None,)}
    assert from_spool["stats"]["results_with_origin"] == from_spool["stats"]["results"]


def test_a_consumer_that_drops_the_citation_is_named_against_the_agents_own_copy(tmp_path):
    spool, wire = record(tmp_path, BINDINGS[1])  # REST
    got = next(e for e in wire if e["method"] == "GET" and e["path"].endswith("/tasks/task-ctx1"))
    task = orjson.loads(got["response"])
    task = task.get("result", task)  # a JSON-RPC response, or the REST body itself
    for artifact in task["artifacts"]:
        artifact["parts"] = [p for p in artifact["parts"] if p.get("mediaType", p.get("mimeType")) != CIT_MT]
    consumer = tmp_path / "consumer" / "task.json"
    consumer.parent.mkdir()
    consumer.write_bytes(orjson.dumps(task))
    db = tmp_path / "a.duckdb"
    held(db, spool, consumer)
    with Archive.open(str(db)) as archive:
        dropped = [f for f in archive.audit().findings if f.rule == "dropped-part"]
    assert [f.source_path for f in dropped] == [str(consumer)]
    assert dropped[0].detail.startswith("the agent sent this Part; this completed copy of task task-ctx1 lacks it")
    assert Path(dropped[0].reference).parent == spool


def test_record_with_an_archive_ingests_its_closed_segments_itself(tmp_path):
    db = tmp_path / "live.duckdb"
    spool, _ = record(tmp_path, db=str(db))
    live = held(db)
    again = held(tmp_path / "after.duckdb", spool)
    assert live["parts"] == again["parts"]
    assert live["results"] == again["results"]
    assert live["origin"] == {(str(spool),)}
