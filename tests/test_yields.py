"""No silent record (issue 27, items 3 and 4): every record read yields a result or a known non-result,
counted by `stats`, or the audit's `unrecognised-record` names it; shapes of independent A2A stacks
(fasta2a's storage dump keyed by task id, python-a2a's messages whose only id is in metadata) are read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.store.tables import RECORD_YIELDS
from tests.transcripts import rows

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = {"visits_pw": 12.5, "n": 1210}

# fasta2a 2.1.1: `json.dump(storage.tasks, f)` of its InMemoryStorage, a dict of Tasks keyed by task id
# (snake_case keys, v1.0 Parts with `media_type`).
FASTA2A_TASKS = {
    "7c1d": {
        "id": "7c1d",
        "context_id": "ctx-9",
        "status": {"state": "completed", "timestamp": "2026-04-20T10:00:00"},
        "history": [
            {
                "role": "user",
                "parts": [{"text": "Visits a week?"}],
                "message_id": "u-1",
                "context_id": "ctx-9",
                "task_id": "7c1d",
            },
        ],
        "artifacts": [
            {"artifact_id": "a-1", "parts": [{"data": NUMBERS, "media_type": "application/json"}]},
        ],
    }
}

# python-a2a 0.5.10: `Message.to_google_a2a()` of an agent's function response, its only id in metadata.
PYTHON_A2A_MESSAGE = {
    "role": "agent",
    "parts": [{"type": "data", "data": {"function_response": {"name": "visits", "response": NUMBERS}}}],
    "metadata": {"message_id": "pa-1", "conversation_id": "conv-1"},
}


def ingested(archive: Archive, write, name: str, content) -> str:
    path = write(name, content)
    archive.ingest([path])
    return path


@pytest.mark.slow
def test_an_object_keyed_by_task_ids_is_read_as_its_tasks(archive, write):
    path = ingested(archive, write, "storage-tasks.json", FASTA2A_TASKS)
    assert rows(archive, "SELECT count(*) FROM records WHERE status = 'quarantined'") == [(0,)]
    assert rows(archive, "SELECT result_key, context_id, state FROM results") == [("task:7c1d", "ctx-9", "completed")]
    parts = "SELECT role, location, artifact_id, kind, media_type FROM parts ORDER BY ordinal"
    assert rows(archive, parts) == [
        ("agent", "artifact", "a-1", "data", "application/json"),
        ("user", "message", None, "text", None),
    ]
    uncited = [f for f in archive.audit().findings if f.rule == "uncited-result"]
    assert [(f.task_id, f.source_path) for f in uncited] == [("7c1d", path)]


@pytest.mark.slow
def test_messages_keyed_by_their_context_are_read_and_a_value_of_another_key_is_not(archive, write):
    message = {"role": "agent", "parts": [{"data": NUMBERS}], "message_id": "m-1", "context_id": "ctx-2"}
    ingested(archive, write, "contexts.json", {"ctx-2": [message]})
    other = ingested(archive, write, "other.json", {"ctx-3": [message]})
    assert rows(archive, "SELECT result_key, context_id FROM results") == [("message:m-1", "ctx-2")]
    assert rows(archive, "SELECT reason FROM records WHERE source_path = ?", [other]) == [
        ("no A2A object recognised (keys: ctx-3)",)
    ]


@pytest.mark.slow
def test_an_agent_message_whose_only_id_is_in_metadata_is_a_result(archive, write):
    path = ingested(archive, write, "python-a2a.jsonl", [PYTHON_A2A_MESSAGE])
    assert rows(archive, "SELECT result_key, kind, message_id FROM results") == [("message:pa-1", "message", "pa-1")]
    uncited = [(f.rule, f.message_id, f.source_path) for f in archive.audit().findings]
    assert uncited == [("uncited-result", "pa-1", path)]


@pytest.mark.slow
def test_python_a2a_s_own_format_is_the_message_its_wire_form_is(archive, write):
    """`Message.to_dict()` (python-a2a's default) and `to_google_a2a()` of one message: one result, two copies
    holding the same Part, each reported uncited (the own format was quarantined: `content` is no array)."""
    native = {
        "content": {"name": "visits", "response": NUMBERS, "type": "function_response"},
        "role": "agent",
        "message_id": "pa-1",
        "conversation_id": "conv-1",
    }
    wire = ingested(archive, write, "wire.jsonl", [PYTHON_A2A_MESSAGE])
    own = ingested(archive, write, "own.jsonl", [native])
    assert rows(archive, "SELECT count(*) FROM records WHERE status = 'quarantined'") == [(0,)]
    hashes = "SELECT source_path, kind, content_hash FROM parts ORDER BY source_path"
    (first, second) = rows(archive, hashes)
    assert (first[0], second[0]) == tuple(sorted([own, wire]))
    assert first[1:] == second[1:]
    found = sorted((f.rule, f.message_id, f.source_path) for f in archive.audit().findings)
    assert found == sorted([("uncited-result", "pa-1", own), ("uncited-result", "pa-1", wire)])


def test_ids_are_read_in_camel_case_snake_case_or_metadata_alike(archive, write):
    def message(ids: dict, metadata: dict | None = None) -> dict:
        return {"role": "agent", "parts": [{"text": "hi"}], **ids, **({"metadata": metadata} if metadata else {})}

    ingested(
        archive,
        write,
        "ids.jsonl",
        [
            message({"messageId": "m-camel", "contextId": "c"}),
            message({"message_id": "m-snake", "context_id": "c"}),
            message({}, {"messageId": "m-meta", "context_id": "c"}),
        ],
    )
    got = rows(archive, "SELECT message_id, context_id FROM results ORDER BY message_id")
    assert got == [("m-camel", "c"), ("m-meta", "c"), ("m-snake", "c")]


@pytest.mark.slow
def test_a_record_that_yields_nothing_is_named_by_a_warning(archive, write):
    path = ingested(
        archive,
        write,
        "odd.jsonl",
        [
            {"role": "assistant", "parts": [{"text": "42% of visits"}], "messageId": "m-9"},
            {"role": "agent", "parts": [{"type": "data", "data": NUMBERS}]},
            {"role": "agent", "parts": [{"type": "data", "data": NUMBERS}], "messageId": "m-10"},
        ],
    )
    found = sorted((f.rule, f.severity, f.source_path, f.locator, f.detail) for f in archive.audit().findings)
    assert found == [
        (
            "uncited-result",
            "error",
            path,
            "line 3",
            "message m-10 states 2 numbers in an agent message and carries no citation Part",
        ),
        (
            "unrecognised-record",
            "warning",
            path,
            "line 1",
            "record at line 1 was read but yields no result and no known non-result: a message whose role is "
            "neither user nor agent (1 Part): it is not stored as a result",
        ),
        (
            "unrecognised-record",
            "warning",
            path,
            "line 2",
            "record at line 2 was read but yields no result and no known non-result: an agent message with "
            "neither a message id nor a task id (1 Part): it cannot be told from others, so it is not stored as "
            "a result",
        ),
    ]
    assert archive.stats()["records_nothing"] == 2
    assert archive.audit(agent="someone else").findings == []  # the scope judges them by agent, as it does cards


@pytest.mark.slow
def test_stats_count_each_kind_of_record(archive, write):
    task = {"kind": "task", "id": "t1", "contextId": "c", "status": {"state": "completed"}, "artifacts": []}
    user = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "hi"}], "messageId": "u"}
    ingested(
        archive,
        write,
        "all.jsonl",
        [
            {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": user}},
            {"jsonrpc": "2.0", "id": 1, "result": task},
            {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t1"}},
            {"jsonrpc": "2.0", "id": 3, "result": {"taskId": "t1", "pushNotificationConfig": {"url": "https://x"}}},
            {"jsonrpc": "2.0", "id": 4, "result": {"id": "c1", "taskId": "t1", "url": "https://x", "token": "k"}},
            {"jsonrpc": "2.0", "id": 5, "result": None},
            {"jsonrpc": "2.0", "id": 6, "error": {"code": -32001, "message": "Task not found"}},
            {"kind": "status-update", "taskId": "t1", "contextId": "c", "status": {"state": "working"}, "final": False},
            {"name": "Agent", "skills": [], "capabilities": {}},
            {"role": "system", "parts": [], "messageId": "s"},
        ],
    )
    stats = archive.stats()
    counted = {kind: stats[f"records_{kind.replace('-', '_')}"] for kind in RECORD_YIELDS}
    assert counted == {
        "result": 1,
        "status": 1,
        "user-message": 1,
        "request": 1,
        "agent-card": 1,
        "push-config": 2,
        "error": 1,
        "empty": 1,
        "nothing": 1,
    }
    assert (stats["records"], stats["quarantined"]) == (10, 0)


TEST_FILES = [
    "tests/js/package-lock.json",
    "tests/js/package.json",
    "tests/js/peer.mjs",
    "tests/stores/README.md",
    "tests/stores/a2a-js-rows.json",
    "tests/stores/a2a-js-tasks.mysql.sql",
    "tests/stores/a2a-js-tasks.postgres.sql",
    "tests/stores/make_js_rows.mjs",
]
"""Files of tests/ that other tests ingest."""
GENERATED = ROOT / "archiver" / "core" / "tests" / "golden" / "index.inputs"
"""The core's generated transcripts (every dialect, shapes broken on purpose): a case a line, a JSON list of
[name, bytes] pairs, bytes outside printable ASCII and the backslash written `\\xNN`."""


def generated_files() -> list[tuple[str, bytes]]:
    def unescaped(text: str) -> bytes:
        return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), text.encode())

    return [(name, unescaped(data)) for line in GENERATED.read_text().splitlines() for name, data in json.loads(line)]


def corpus(tmp_path: Path) -> list[str]:
    """Every sample, every file of tests/ that the tests ingest, the core's generated transcripts and a
    generated benchmark corpus."""
    from benchmarks.generate import generate

    paths = [str(ROOT / "sample_transcripts"), *(str(ROOT / name) for name in TEST_FILES)]
    for number, (name, data) in enumerate(generated_files()):
        folder = tmp_path / "generated" / str(number)
        folder.mkdir(parents=True)
        (folder / name).write_bytes(data)
    generate(tmp_path / "bench", tasks=60, tasks_per_file=20)
    return [*paths, str(tmp_path / "generated"), str(tmp_path / "bench")]


@pytest.mark.slow
def test_no_record_of_any_sample_or_test_corpus_passes_without_a_word(tmp_path):
    with Archive.open(str(tmp_path / "walk.duckdb")) as archive:
        archive.ingest(corpus(tmp_path))
        named = {
            (f.rule, f.source_path, f.locator)
            for f in archive.audit(rules=["unreadable-record", "unrecognised-record"]).findings
        }
        records = rows(
            archive,
            """SELECT r.source_path, r.locator, r.status, r.yields,
                      EXISTS (SELECT 1 FROM results c WHERE c.source_path = r.source_path
                              AND list_contains(c.record_ids, r.record_id)) AS in_a_copy
               FROM records r WHERE r.kind <> 'filler'""",
        )
    assert len(records) > 700
    silent = [record for record in records if not said(record, named)]
    assert silent == []
    kinds = {yields for _, _, status, yields, _ in records if status == "ok"}
    assert kinds >= {"result", "status", "user-message", "request", "agent-card", "error", "nothing"}


def said(record: tuple, named: set) -> bool:
    """Whether a record is accounted for: it joined a stored copy, is a known non-result, or a finding names it."""
    path, locator, status, yields, in_a_copy = record
    if status == "quarantined":
        return ("unreadable-record", path, locator) in named
    if yields == "nothing":
        return ("unrecognised-record", path, locator) in named
    if yields == "result":
        return in_a_copy
    return yields in RECORD_YIELDS


@pytest.mark.parametrize("page", ["docs/recognisers.md", "docs/reliability.md", "migrations/0012_record_yields.sql"])
def test_the_pages_that_list_the_kinds_list_the_cores(page):
    """The core names the kinds (`RECORD_YIELDS`); each page that lists them lists exactly those."""
    text = " ".join((ROOT / page).read_text().split())
    end = text.index("`nothing`") + len("`nothing`")
    listed = re.findall(r"`([a-z-]+)`", text[text.rindex("`result`", 0, end) : end])
    kinds = [word for word in listed if word != "null"]  # `null`: the JSON value `empty` stands for
    assert tuple(dict.fromkeys(kinds)) == RECORD_YIELDS
