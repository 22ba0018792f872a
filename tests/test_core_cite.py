"""Differential tests of the core's `cite` stage and `understand::assemble` against the Python code they
replace: the same inputs through `archiver.cite` / `archiver.understand.assemble` and through
`archiver._core` give equal answers, types and order included."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from archiver import _core
from archiver.cite.citations import MEDIA_TYPE, citation_of
from archiver.cite.claims import numeric_leaves
from archiver.cite.parts import judged
from archiver.understand import assemble
from archiver.understand.dialects import NotUnderstoodError
from archiver.understand.model import (
    AgentCard,
    Artifact,
    ArtifactUpdate,
    ErrorResponse,
    Message,
    Part,
    Request,
    Status,
    StatusUpdate,
    Task,
)

ROOT = Path(__file__).resolve().parent.parent
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""For the assemblies: each example is a file of up to 14 records through both assemblies."""


def typed(value: Any) -> Any:
    """A value with the type of every leaf and the order of every dict made visible to `==` (where
    1 == 1.0 == True and {"a": 1, "b": 2} == {"b": 2, "a": 1})."""
    if isinstance(value, dict):
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return ("list", [typed(item) for item in value])
    return (type(value).__name__, value)


# Citations


def python_citation(data: Any, media_type: str | None) -> dict | None:
    citation = citation_of(data, media_type)
    if citation is None:
        return None
    return {**dataclasses.asdict(citation), "valid": citation.valid}


def same_citation(data: Any, media_type: str | None) -> None:
    assert typed(_core.citation_of_value(data, media_type)) == typed(python_citation(data, media_type))


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
BLANKS = st.sampled_from(["", " ", "\t\n", "\u3000", "\x1c\x1f", "\u00a0 \u2028"])
STRINGS = st.one_of(BLANKS, st.text(max_size=12), st.sampled_from(["Q3 tracker", " padded ", "é"]))
FIELD = st.one_of(STRINGS, st.none(), JSON)
N = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 2**63, 2**64, -(2**63) - 1, 10**300, -(10**300)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.5, 2.0, -0.0, 0.0, -3.0, 1e300, -1e300, 1e-7, 1e16, -1e22, 0.1, 2.0**70]),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def iso_dates(draw) -> str:
    """A field period's date in one of the forms Python's `date.fromisoformat` knows, or near one."""
    day = draw(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
    year, week, weekday = day.isocalendar()
    forms = [
        f"{day.year:04d}-{day.month:02d}-{day.day:02d}",
        f"{day.year:04d}{day.month:02d}{day.day:02d}",
        f"{year:04d}-W{week:02d}-{weekday}",
        f"{year:04d}W{week:02d}{weekday}",
        f"{year:04d}-W{week:02d}",
        f"{year:04d}W{week:02d}",
    ]
    text = draw(st.sampled_from(forms))
    if draw(st.booleans()):
        text += draw(st.sampled_from(["", "T10:00:00Z", "xx", "é", "x", "/", " ", "-1", "0"]))
    if draw(st.booleans()):
        text = draw(BLANKS) + text + draw(BLANKS)
    return text


NEAR_DATES = st.text(alphabet="0123456789-W/ Tx\u3000\x1cé", max_size=14)
RAW_DATES = st.builds(
    lambda y, m, d, w: f"{y:04d}-{m:02d}-{d:02d}" if w is None else f"{y:04d}-W{m:02d}-{w}",
    st.integers(0, 9999),
    st.integers(0, 60),
    st.integers(0, 39),
    st.none() | st.integers(0, 9),
)
ONE_DATE = st.one_of(iso_dates(), NEAR_DATES, RAW_DATES)
FIELDED = st.one_of(
    ONE_DATE,
    st.builds(lambda a, b: f"{a}/{b}", ONE_DATE, ONE_DATE),
    st.builds(lambda a: f"{a}/", ONE_DATE),
    st.none(),
    JSON,
)
WARNINGS = st.one_of(
    st.lists(st.text(max_size=6), max_size=3), st.lists(JSON, max_size=3), JSON, st.text(max_size=4)
)
MEDIA_TYPES = st.one_of(
    st.none(),
    st.just(MEDIA_TYPE),
    st.sampled_from(
        [
            " Application/VND.Upperhand.Citations+JSON ",
            "application/vnd.upperhand.citations+json; version=1",
            "\x1capplication/vnd.upperhand.citations+json\u3000;x",
            "application/json",
            "text/plain",
            "",
        ]
    ),
    st.text(max_size=10),
)


@st.composite
def objects(draw, keys: dict) -> dict:
    """An object with some of `keys` (each drawn from its strategy, or left out) and unknown keys, in any
    order."""
    items = [(key, draw(strategy)) for key, strategy in keys.items() if draw(st.integers(0, 5))]
    items += draw(st.lists(st.tuples(st.text(max_size=6), JSON), max_size=2))
    return dict(draw(st.permutations(items)))


BASES = st.one_of(objects({"name": FIELD, "n": N}), JSON)
SOURCES = st.one_of(objects({"table": FIELD, "column": FIELD, "function": FIELD}), JSON)
CITATIONS = objects(
    {
        "study": FIELD,
        "period": FIELD,
        "base": BASES,
        "source": SOURCES,
        "fielded": FIELDED,
        "weight": FIELD,
        "warnings": WARNINGS,
    }
)


@FAST
@given(CITATIONS, MEDIA_TYPES)
@example(
    {
        "study": "Q3",
        "period": "2026 Q1",
        "base": {"name": "all adults", "n": 1200},
        "source": {"table": "t", "column": "c", "function": "mean"},
        "fielded": "2026-04-02/2026-04-19",
        "weight": "census",
        "warnings": ["small base"],
        "x": {"y": [1, 2.0]},
    },
    MEDIA_TYPE,
)
def test_citations(data, media_type):
    same_citation(data, media_type)


@FAST
@given(JSON, MEDIA_TYPES)
def test_citation_data_of_every_type(data, media_type):
    same_citation(data, media_type)


@FAST
@given(FIELDED)
def test_field_periods(fielded):
    data = {"study": "s", "period": "p", "base": {"name": "b", "n": 1}, "fielded": fielded}
    same_citation(data, None)


def test_every_week_of_the_edges():
    """Week 53 exists only in the years that have it; years 1 and 9999 end where `date` does."""
    for year in (1, 2, 2015, 2020, 2026, 9998, 9999):
        for week in (0, 1, 52, 53, 54):
            for day in (0, 1, 7, 8):
                for text in (f"{year:04d}-W{week:02d}-{day}", f"{year:04d}W{week:02d}{day}", f"{year:04d}W{week:02d}"):
                    same_citation({"study": "s", "period": "p", "base": {"n": 1}, "fielded": text}, None)


@pytest.mark.parametrize("n", [1.5, -2.5, 1e-7, 1e16 + 0.5, 123456.789, -0.0, -1e300, -(2**70), -(10**30)])
def test_base_n_problems(n):
    same_citation({"study": "s", "period": "p", "base": {"name": "b", "n": n}}, MEDIA_TYPE)


def test_base_n_beyond_a_double():
    """Python's `float(n)` raises OverflowError for an integer beyond a double; the core gives infinity
    (a known divergence: the Python ingest fails there)."""
    data = {"study": "s", "period": "p", "base": {"name": "b", "n": 10**400}}
    with pytest.raises(OverflowError):
        citation_of(data, MEDIA_TYPE)
    assert _core.citation_of_value(data, MEDIA_TYPE)["base_n"] == float("inf")


# Claims


KEYS = st.text(alphabet="a~/0~1é ", max_size=5)
CLAIM_DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)


def typed_leaves(leaves) -> list:
    return [(pointer, type(value).__name__, value) for pointer, value in leaves]


@FAST
@given(CLAIM_DATA)
def test_numeric_leaves(data):
    assert typed_leaves(_core.numeric_leaves_of_value(data)) == typed_leaves(numeric_leaves(data))


def test_numeric_leaves_deep():
    data: Any = 7
    for level in range(900):
        data = [data, level] if level % 2 else {"~/": data, "n": 1.5}
    assert typed_leaves(_core.numeric_leaves_of_value(data)) == typed_leaves(numeric_leaves(data))


@FAST
@given(
    st.sampled_from(["data", "text", "file", "unknown"]),
    st.one_of(CITATIONS, CLAIM_DATA),
    MEDIA_TYPES,
    st.sampled_from(["agent", "user", "unknown"]),
)
def test_judged(kind, data, media_type, role):
    citation, leaves = judged(kind, data, media_type, role)
    python = (None if citation is None else {**dataclasses.asdict(citation), "valid": citation.valid}, leaves)
    core = _core.judged_value(kind, data, media_type, role)
    assert typed(core[0]) == typed(python[0])
    assert typed_leaves(core[1]) == typed_leaves(python[1])


# Assembly: the same events through Python's FileAssembly and the core's

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(moment: datetime | None) -> int | None:
    return None if moment is None else (moment - EPOCH) // timedelta(microseconds=1)


def describe_part(part: Part) -> dict:
    return {
        "kind": part.kind,
        "text": part.text,
        "data": part.data,
        "file": part.file,
        "media_type": part.media_type,
        "metadata": part.metadata,
        "raw": part.raw,
    }


def describe_message(message: Message | None) -> dict | None:
    if message is None:
        return None
    return {
        "message_id": message.message_id,
        "role": message.role,
        "parts": [describe_part(p) for p in message.parts],
        "context_id": message.context_id,
        "task_id": message.task_id,
        "metadata": message.metadata,
    }


def describe_artifact(artifact: Artifact) -> dict:
    return {
        "artifact_id": artifact.artifact_id,
        "name": artifact.name,
        "parts": [describe_part(p) for p in artifact.parts],
        "metadata": artifact.metadata,
    }


def describe_status(status: Status) -> dict:
    return {"state": status.state, "timestamp": micros(status.timestamp), "message": describe_message(status.message)}


def describe(event) -> dict:
    """A Python model event in the JSON the core's test surface reads events from."""
    if isinstance(event, Task):
        return {
            "event": "task",
            "task_id": event.task_id,
            "context_id": event.context_id,
            "status": describe_status(event.status),
            "artifacts": [describe_artifact(a) for a in event.artifacts],
            "history": [describe_message(m) for m in event.history],
            "metadata": event.metadata,
        }
    if isinstance(event, StatusUpdate):
        return {
            "event": "status_update",
            "task_id": event.task_id,
            "context_id": event.context_id,
            "status": describe_status(event.status),
        }
    if isinstance(event, ArtifactUpdate):
        return {
            "event": "artifact_update",
            "task_id": event.task_id,
            "context_id": event.context_id,
            "artifact": describe_artifact(event.artifact),
            "append": event.append,
            "last_chunk": event.last_chunk,
        }
    if isinstance(event, Message):
        return {"event": "message", **describe_message(event)}
    if isinstance(event, AgentCard):
        return {"event": "card", "card": event.card}
    if isinstance(event, ErrorResponse):
        return {"event": "error", "rpc_id": event.rpc_id, "code": event.code, "message": event.message}
    assert isinstance(event, Request)
    return {"event": "request", "rpc_id": event.rpc_id, "method": event.method, "message": describe_message(event.message)}


def part_of(d: dict) -> Part:
    return Part(d["kind"], d["text"], d["data"], d["file"], d["media_type"], d["metadata"], d["raw"])


def message_of(d: dict | None) -> Message | None:
    if d is None:
        return None
    return Message(d["message_id"], d["role"], [part_of(p) for p in d["parts"]], d["context_id"], d["task_id"], d["metadata"])


def artifact_of(d: dict) -> Artifact:
    return Artifact(d["artifact_id"], d["name"], [part_of(p) for p in d["parts"]], d["metadata"])


def status_of(d: dict) -> Status:
    moment = None if d["timestamp"] is None else EPOCH + timedelta(microseconds=d["timestamp"])
    return Status(d["state"], moment, message_of(d["message"]))


def event_of(d: dict):
    """The Python model event a description describes (new objects each time: the assembly changes some)."""
    kind = d["event"]
    if kind == "task":
        return Task(
            d["task_id"],
            d["context_id"],
            status_of(d["status"]),
            [artifact_of(a) for a in d["artifacts"]],
            [message_of(m) for m in d["history"]],
            d["metadata"],
        )
    if kind == "status_update":
        return StatusUpdate(d["task_id"], d["context_id"], status_of(d["status"]))
    if kind == "artifact_update":
        return ArtifactUpdate(d["task_id"], d["context_id"], artifact_of(d["artifact"]), d["append"], d["last_chunk"])
    if kind == "message":
        return message_of(d)
    if kind == "card":
        return AgentCard(d["card"])
    if kind == "error":
        return ErrorResponse(d["rpc_id"], d["code"], d["message"])
    return Request(d["rpc_id"], d["method"], message_of(d["message"]))


def shape_part(part: Part) -> dict:
    return describe_part(part)


def shape_copy(copy: assemble.StoredCopy) -> dict:
    """A stored copy as the core's test surface gives one."""
    return {
        "key": copy.key,
        "kind": copy.kind,
        "task_id": copy.task_id,
        "context_id": copy.context_id,
        "message_id": copy.message_id,
        "state": copy.state,
        "timestamp": micros(copy.timestamp),
        "metadata": copy.metadata,
        "terminal": copy.terminal,
        "record_ids": list(copy.record_ids),
        "locator": copy.locator,
        "artifacts": [[key, describe_artifact(a)] for key, a in copy.artifacts.items()],
        "messages": [[key, describe_message(m)] for key, m in copy.messages.items()],
        "located_parts": [
            [
                located.location,
                located.part_index,
                shape_part(located.part),
                located.role,
                located.artifact.artifact_id if located.artifact else None,
                located.message.message_id if located.message else None,
            ]
            for located in copy.located_parts()
        ],
    }


def described_events(events: list) -> list:
    return [event_of(e) for e in events]


def python_assembly(records: list, held_bytes: int, kept_bytes: int, events_of=described_events) -> list:
    kept = assemble.KEPT_BYTES
    assemble.KEPT_BYTES = kept_bytes
    try:
        assembly = assemble.FileAssembly(held_bytes=held_bytes)
        out: list = []
        for record_id, rpc_id, events, locator, size in records:
            try:
                assembly.add(record_id, rpc_id, events_of(events), locator, size)
            except NotUnderstoodError as exc:
                out.append(["refused", record_id, str(exc)])
        out += [["copy", shape_copy(copy)] for copy in assembly.copies()]
        out += [["card", record_id, card] for record_id, card in assembly.cards]
        out += [["error", record_id, e.rpc_id, e.code, e.message] for record_id, e in assembly.errors]
        return out
    finally:
        assemble.KEPT_BYTES = kept


def one_task_a_record(records: list) -> bool:
    """Whether no record touches two tasks: then which tasks are put aside, and so the order of the copies,
    does not hang on the order of a Python set."""
    kinds = ("task", "status_update", "artifact_update")
    return all(len({e["task_id"] for e in events if e["event"] in kinds}) <= 1 for _, _, events, _, _ in records)


def same_assembly(records: list, held_bytes: int = assemble.HELD_BYTES, kept_bytes: int = assemble.KEPT_BYTES) -> list:
    python = python_assembly(records, held_bytes, kept_bytes)
    core = _core.assemble_values(records, held_bytes, kept_bytes)
    if not one_task_a_record(records):
        python, core = _copies_sorted(python), _copies_sorted(core)
    assert typed(core) == typed(python)
    return core


def _copies_sorted(items: list) -> list:
    copies = sorted((item for item in items if item[0] == "copy"), key=lambda item: item[1]["key"])
    return [item for item in items if item[0] != "copy"] + copies


TASK_IDS = st.sampled_from(["t1", "t2", "t3", "t4"])
CONTEXTS = st.sampled_from([None, "c1", "c2", ""])
MESSAGE_IDS = st.sampled_from([None, "", "m1", "m2", "m3"])
NAMES = st.sampled_from([None, "", "report", "table"])
METADATA = st.sampled_from([None, {}, {"a": 1}, {"b": [True, 1.0]}])
RPC_IDS = st.sampled_from([None, 1, 1.0, True, False, 0, -0.0, "1", 2, "x", [1], {"a": 1}, 2**70, float(2**70), 1.5])
PART_DATA = st.one_of(st.none(), JSON)
PARTS = st.lists(
    st.builds(
        lambda kind, text, data, file, media, meta, raw: {
            "kind": kind,
            "text": text,
            "data": data,
            "file": file,
            "media_type": media,
            "metadata": meta,
            "raw": raw,
        },
        st.sampled_from(["text", "data", "file", "unknown"]),
        st.none() | st.sampled_from(["", "hi", "4210"]),
        PART_DATA,
        st.none() | st.sampled_from([{"uri": "https://x"}, "a.txt", {"bytes": "AA==", "name": "a"}]),
        st.none() | st.sampled_from([MEDIA_TYPE, "application/json"]),
        METADATA,
        st.none() | st.sampled_from([{}, {"kind": "mystery", "x": 1}]),
    ),
    max_size=3,
)
MESSAGES = st.builds(
    lambda mid, role, parts, ctx, task, meta: {
        "message_id": mid,
        "role": role,
        "parts": parts,
        "context_id": ctx,
        "task_id": task,
        "metadata": meta,
    },
    MESSAGE_IDS,
    st.sampled_from(["user", "agent", "unknown"]),
    PARTS,
    CONTEXTS,
    st.none() | st.just("") | TASK_IDS,
    METADATA,
)
ARTIFACTS = st.builds(
    lambda aid, name, parts, meta: {"artifact_id": aid, "name": name, "parts": parts, "metadata": meta},
    st.sampled_from([None, "", "a1", "a2"]),
    NAMES,
    PARTS,
    METADATA,
)
STATUSES = st.builds(
    lambda state, ts, message: {"state": state, "timestamp": ts, "message": message},
    st.sampled_from([None, "", "working", "input-required", "completed", "failed"]),
    st.none() | st.integers(-(2**40), 2**52),
    st.none() | MESSAGES,
)
EVENTS = st.one_of(
    st.builds(
        lambda task, ctx, status, artifacts, history, meta: {
            "event": "task",
            "task_id": task,
            "context_id": ctx,
            "status": status,
            "artifacts": artifacts,
            "history": history,
            "metadata": meta,
        },
        TASK_IDS,
        CONTEXTS,
        STATUSES,
        st.lists(ARTIFACTS, max_size=3),
        st.lists(MESSAGES, max_size=3),
        METADATA,
    ),
    st.builds(
        lambda task, ctx, status: {"event": "status_update", "task_id": task, "context_id": ctx, "status": status},
        TASK_IDS,
        CONTEXTS,
        STATUSES,
    ),
    st.builds(
        lambda task, ctx, artifact, append, last: {
            "event": "artifact_update",
            "task_id": task,
            "context_id": ctx,
            "artifact": artifact,
            "append": append,
            "last_chunk": last,
        },
        TASK_IDS,
        CONTEXTS,
        ARTIFACTS,
        st.booleans(),
        st.booleans(),
    ),
    MESSAGES.map(lambda m: {"event": "message", **m}),
    st.builds(
        lambda rpc_id, method, message: {"event": "request", "rpc_id": rpc_id, "method": method, "message": message},
        RPC_IDS,
        st.sampled_from([None, "message/send"]),
        st.none() | MESSAGES,
    ),
    st.builds(lambda card: {"event": "card", "card": card}, st.dictionaries(st.text(max_size=3), JSON, max_size=2)),
    st.builds(
        lambda rpc_id, code, message: {"event": "error", "rpc_id": rpc_id, "code": code, "message": message},
        RPC_IDS,
        st.none() | st.integers(-33000, 0) | st.text(max_size=3),
        st.none() | st.text(max_size=5),
    ),
)


@st.composite
def record_lists(draw) -> list:
    records = []
    for index in range(draw(st.integers(0, 14))):
        record_id = f"r{index}" if not records or draw(st.integers(0, 4)) else records[-1][0]
        events = draw(st.lists(EVENTS, max_size=4))
        records.append((record_id, draw(RPC_IDS), events, f"line {index + 1}", draw(st.integers(0, 300))))
    return records


@SLOW
@given(record_lists())
def test_assembly(records):
    same_assembly(records)


@SLOW
@given(record_lists(), st.integers(0, 400), st.sampled_from([0, 1, 150, 10**9]))
def test_assembly_with_tasks_put_aside(records, held_bytes, kept_bytes):
    same_assembly(records, held_bytes, kept_bytes)


def test_many_loose_messages_and_tasks_put_aside():
    """Past LOOSE_BATCH loose messages and with most tasks on disk, nothing changes."""
    records = []
    for index in range(1500):
        task = f"t{index % 97}"
        events = [
            {"event": "status_update", "task_id": task, "context_id": "c", "status": {"state": "working", "timestamp": index, "message": None}},
            {
                "event": "message",
                "message_id": None if index % 3 else f"m{index % 50}",
                "role": ("agent", "user", "unknown")[index % 3],
                "parts": [{"kind": "text", "text": str(index % 7), "data": None, "file": None, "media_type": None, "metadata": None, "raw": None}],
                "context_id": "c",
                "task_id": task if index % 5 == 0 else None,
                "metadata": None,
            },
        ]
        records.append((f"r{index}", index, events, f"line {index + 1}", 100))
    copies = same_assembly(records, held_bytes=1000)
    assert len(copies) > 97


def test_a_context_conflict_is_refused_before_any_change():
    status = {"state": "working", "timestamp": None, "message": None}
    records = [
        ("r1", None, [{"event": "status_update", "task_id": "t1", "context_id": "c1", "status": status}], "line 1", 10),
        (
            "r2",
            None,
            [
                {"event": "status_update", "task_id": "t2", "context_id": "c1", "status": status},
                {"event": "status_update", "task_id": "t1", "context_id": "c2", "status": status},
            ],
            "line 2",
            10,
        ),
        ("r3", None, [{"event": "status_update", "task_id": "t1", "context_id": "c3", "status": status}], "line 3", 10),
    ]
    for held in (assemble.HELD_BYTES, 0):
        core = same_assembly(records, held)
        assert core[0] == ["refused", "r2", "task t1 was seen in context c1; this record puts it in context c2"]


# The samples: every record of every file the tests ingest, read by the Python readers


def sample_files() -> list[Path]:
    skipped = {".py", ".pyc", ".md", ".js", ".json"}
    found = [p for p in sorted((ROOT / "sample_transcripts").rglob("*")) if p.is_file() and p.suffix not in skipped]
    found += [p for p in sorted((ROOT / "tests").rglob("*")) if p.is_file() and p.suffix not in {".py", ".pyc"}]
    return [p for p in found if "__pycache__" not in p.parts]


def sample_values(path: Path) -> list:
    """The plain JSON records of a file (no spool envelopes, no task-store rows), decoded."""
    from archiver.read.containers import SourceFile, read_records
    from archiver.read.decode import decode
    from archiver.understand.recorded import is_envelope

    records = []
    try:
        _, _, reader = read_records(SourceFile.on_disk(str(path)))
        for record in reader:
            if record.kind != "json" or record.envelope is not None:
                continue
            try:
                value = decode(record.payload)
            except ValueError:
                continue
            if is_envelope(value):
                continue
            rpc_id = value.get("id") if isinstance(value, dict) and "jsonrpc" in value else None
            records.append((f"r{record.seq}", rpc_id, value, record.locator, len(record.raw)))
    except Exception:  # noqa: BLE001 - a file the readers refuse whole has no events to compare
        return []
    return records


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_samples_through_the_cores_events_of(path):
    """The same decoded records through Python's events_of and FileAssembly and through the core's."""
    from archiver.understand.events import events_of

    records = sample_values(path)
    for held in (assemble.HELD_BYTES, 64):
        python = python_assembly(records, held, assemble.KEPT_BYTES, events_of)
        core = _core.assemble_decoded(records, held, assemble.KEPT_BYTES)
        assert typed(_copies_sorted(core)) == typed(_copies_sorted(python))


def sample_records(path: Path) -> list:
    from archiver import prepare
    from archiver.read.containers import SourceFile, read_records

    records = []
    try:
        _, _, reader = read_records(SourceFile.on_disk(str(path)))
        for record in reader:
            if record.kind == "filler":
                continue
            try:
                rpc_id, events = prepare._events(record)
            except (ValueError, RecursionError, TypeError):
                continue
            records.append((f"r{record.seq}", rpc_id, [describe(e) for e in events], record.locator, len(record.raw)))
    except Exception:  # noqa: BLE001 - a file the readers refuse whole has no events to compare
        return []
    return records


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_samples(path):
    records = sample_records(path)
    same_assembly(records)
    same_assembly(records, held_bytes=64)
    for _, _, events, _, _ in records:
        for event in map(event_of, events):
            for part in _parts_of(event):
                data = part.data
                assert typed(_core.judged_value(part.kind, data, part.media_type, "agent")[1]) == typed(
                    judged(part.kind, data, part.media_type, "agent")[1]
                )
                if part.kind == "data":
                    same_citation(data, part.media_type)


def _parts_of(event) -> list[Part]:
    if isinstance(event, Task):
        messages = [*event.history, event.status.message]
        return [p for a in event.artifacts for p in a.parts] + [p for m in messages if m for p in m.parts]
    if isinstance(event, StatusUpdate):
        return list(event.status.message.parts) if event.status.message else []
    if isinstance(event, ArtifactUpdate):
        return list(event.artifact.parts)
    if isinstance(event, Message):
        return list(event.parts)
    if isinstance(event, Request) and event.message:
        return list(event.message.parts)
    return []
