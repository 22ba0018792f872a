"""Differential tests of the compiled core's `index_files` (`archiver/core/src/{load,index.rs}`): the Arrow
batches and outcomes it gives equal those of the Python code it replaces (`tests/python_prepare.py`,
the `prepare` that came before the core), for every file the tests ingest, for small files prepared
together, and for generated transcripts."""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver import _core
from archiver.canonical import compact_json
from archiver.load import rows as rows_module
from archiver.load.rows import arrow_schemas
from archiver.load.versions import new_version
from archiver.read.containers import GZIP_LIMIT, RECORD_LIMIT, SourceFile, StoreTable, read_records
from archiver.store import migrations
from tests import python_prepare as prepare_module
from tests.python_prepare import prepare
from tests.test_properties import json_values
from tests.transcripts import citation, jsonrpc_result, v1_cited_parts, v1_task

ROOT = Path(__file__).resolve().parent.parent
MOMENT = datetime(2026, 4, 20, 10, 0, 0, 123456, tzinfo=UTC)
MOMENT_US = int(MOMENT.timestamp()) * 1_000_000 + MOMENT.microsecond


def corpus_files() -> list[Path]:
    """Every file the tests ingest: the samples and the test corpora (the test sources themselves too:
    files that are no transcript are quarantined whole, the same way on both paths)."""
    return [
        path
        for folder in ("sample_transcripts", "tests")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and "node_modules" not in path.parts
    ]


class FixedMoment(datetime):
    @classmethod
    def now(cls, tz=None):
        return MOMENT


@pytest.fixture(scope="module")
def schemas(tmp_path_factory) -> dict:
    """The Arrow schemas of a real migrated archive on disk."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("archive") / "index.duckdb"))
    migrations.upgrade(con)
    try:
        return arrow_schemas(con)
    finally:
        con.close()


@pytest.fixture(autouse=True)
def fixed_moment(monkeypatch):
    monkeypatch.setattr(prepare_module, "datetime", FixedMoment)
    monkeypatch.setattr(prepare_module, "report_read", lambda *_: None)


def version_of(source: SourceFile, data: bytes):
    return new_version(source.path, hashlib.sha256(data).hexdigest(), len(data), None, None)


def on_disk(path: Path):
    source = SourceFile.on_disk(str(path))
    return source, version_of(source, path.read_bytes())


def spec(source: SourceFile, version) -> dict:
    """What the ingest hands the core for one file (the lead's integration does the same)."""
    base = {"path": source.path, "key": version.key, "sha256": version.sha256, "size": version.size}
    if source.unreadable is not None:
        return {**base, "unreadable": source.unreadable}
    if source.store is not None:
        records = read_records(source)[2]
        rows = [(record.locator, record.raw) for record in records]
        return {**base, "rows": rows, "container": source.store.kind, "data": source.data}
    where = {"data": source.data} if source.data is not None else {"open": os.fsencode(source.fs_path)}
    container, _, records = read_records(source)
    if container == "sqlite":
        records = list(records)
        if records and all(record.kind == "row" for record in records):
            return {**base, **where, "rows": [(r.locator, r.raw) for r in records], "container": "sqlite"}
        return {**base, **where, "refused": records[0].error, "container": "sqlite"}
    return {**base, **where}


def python_side(files: list, schemas: dict) -> tuple[list[tuple[str, pa.Table]], list[dict]]:
    prepared = prepare(files, schemas)
    spools = list({id(one.tables): one.tables for one in prepared}.values())  # several files share one spool
    tables = [table for spool in spools for table in spool]
    outcomes = [outcome_of(one) for one in prepared]
    for one in prepared:
        one.discard()
    return tables, outcomes


def outcome_of(prepared) -> dict:
    row, outcome = prepared.source_row, prepared.outcome
    return {
        "path": outcome.path,
        "container": outcome.container,
        "compression": row["compression"],
        "records": outcome.records,
        "quarantined": outcome.quarantined,
        "recognised": outcome.recognised,
        "problems": outcome.problems,
    }


def core_side(files: list, schemas: dict, **limits) -> tuple[list[tuple[str, pa.Table]], list[dict]]:
    index = _core.index_files(
        [spec(source, version) for source, version in files], schemas, MOMENT_US, RECORD_LIMIT, GZIP_LIMIT, **limits
    )
    tables = []
    for name, batch in index:
        if name is None:  # what came before is void
            tables = []
            continue
        tables.append((name, pa.Table.from_batches([pa.record_batch(batch)])))
    return tables, index.outcomes()


def assert_same(files: list, schemas: dict, **limits) -> list[tuple[str, pa.Table]]:
    expected, expected_outcomes = python_side(files, schemas)
    got, outcomes = core_side(files, schemas, **limits)
    assert outcomes == expected_outcomes
    assert [(name, t.num_rows) for name, t in got] == [(name, t.num_rows) for name, t in expected]
    for (name, mine), (_, theirs) in zip(got, expected, strict=True):
        assert mine.schema == theirs.schema, name
        if not mine.equals(theirs):
            for column in theirs.column_names:
                assert mine[column].to_pylist() == theirs[column].to_pylist(), f"{name}.{column}"
            assert mine.equals(theirs), name
    return got


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_the_tests_ingest_gives_the_same_batches(path, schemas):
    assert_same([on_disk(path)], schemas)


def test_small_files_prepared_together_give_the_same_batches(schemas):
    files = [on_disk(path) for path in corpus_files() if path.stat().st_size < 200_000][:40]
    assert_same(files, schemas)


def test_batches_are_handed_over_at_the_same_rows(schemas, monkeypatch):
    """Tiny hand-over limits: a file becomes many batches, at the same rows on both paths."""
    monkeypatch.setattr(rows_module, "BATCH_BYTES", 3_000)
    monkeypatch.setattr(rows_module, "BATCH_ROWS", 7)
    for name in ("kestrel-mobility/rpc-v1.jsonl", "versant-insights/stream-v1.sse", "legacy-funnel/rpc-v03.jsonl"):
        got = assert_same([on_disk(ROOT / "sample_transcripts" / name)], schemas, batch_bytes=3_000, batch_rows=7)
        assert len(got) > 3
    files = [on_disk(p) for p in sorted((ROOT / "sample_transcripts" / "kestrel-mobility").iterdir())]
    assert_same(files, schemas, batch_bytes=3_000, batch_rows=7)


def test_files_in_memory_unreadable_and_of_task_stores(schemas, tmp_path):
    data = b'{"jsonrpc": "2.0", "id": 1, "result": {"id": "t1", "contextId": "c", "status": {"state": "completed"}}}\n'
    stdin = SourceFile("<stdin>", data=data)
    gone = SourceFile(str(tmp_path / "gone.jsonl"), unreadable="cannot read the file: No such file or directory")
    table = StoreTable("postgresql", "tasks", ("id",))
    rows = (ROOT / "tests" / "stores" / "a2a-js-rows.json").read_bytes()
    store_rows = b"\n".join(orjson.dumps(row) for row in orjson.loads(rows)["first"])
    store = SourceFile("postgresql://db/tasks", data=store_rows, store=table)
    for source, raw in ((stdin, data), (gone, b""), (store, store_rows)):
        assert_same([(source, version_of(source, raw))], schemas)
    assert_same([(s, version_of(s, raw)) for s, raw in ((stdin, data), (gone, b""), (store, store_rows))], schemas)


def test_generated_corpus(schemas, tmp_path):
    from benchmarks.generate import generate

    generate(tmp_path / "corpus", tasks=60, tasks_per_file=20)
    paths = sorted(p for p in (tmp_path / "corpus").rglob("*") if p.is_file())
    for path in paths:
        assert_same([on_disk(path)], schemas)
    assert_same([on_disk(path) for path in paths], schemas)


def test_progress_is_readable_while_reading_and_the_gil_is_released(schemas, tmp_path):
    path = tmp_path / "many.jsonl"
    lines = [orjson.dumps(jsonrpc_result(v1_task(f"t{n}", v1_cited_parts()), n)) for n in range(300)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    source, version = on_disk(path)
    index = _core.index_files([spec(source, version)], schemas, MOMENT_US, RECORD_LIMIT, GZIP_LIMIT, batch_rows=50)
    seen = []
    watcher = threading.Thread(target=lambda: seen.extend((index.bytes_read, index.records_read) for _ in range(50)))
    watcher.start()
    names = [name for name, _ in index]
    watcher.join()
    assert "records" in names
    assert "claims" in names
    assert (index.bytes_read, index.records_read) == (version.size, 300)
    assert all(0 <= b <= version.size and 0 <= r <= 300 for b, r in seen)
    assert index.outcomes()[0]["recognised"] == 300


def test_a_huge_value_is_a_batch_of_its_own_and_equal(schemas, tmp_path):
    """A record and a file Part of more than 4 MiB: batches of their own, the same rows as Python's."""
    huge = "x" * (5 * 2**20)
    task = v1_task("big", [{"text": "small"}, {"url": "https://a/b", "raw": None, "data": None, "file": None}])
    task["artifacts"][0]["parts"] = [
        {"text": "small"},
        {"raw": huge, "filename": "big.bin", "mediaType": "x/y"},
        {"text": "after"},
    ]
    path = tmp_path / "huge.jsonl"
    path.write_bytes(orjson.dumps(jsonrpc_result({"kind": "task", **task})) + b"\n" + b'{"no": 1}\n')
    source, version = on_disk(path)
    expected, _ = python_side([(source, version)], schemas)
    got, _ = core_side([(source, version)], schemas)
    assert [n for n, _ in got].count("parts") == 3  # the huge Part alone, its buffer not copied
    for name in {name for name, _ in expected}:
        mine = pa.concat_tables([t for n, t in got if n == name])
        theirs = pa.concat_tables([t for n, t in expected if n == name])
        assert mine.equals(theirs), name


json_numbers = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, -0.0, 1e308, -1e308, 9.9e307, 2**63, -(2**63), 2**64, 10**400, -(10**400), 1e16, 4210.0])
)
json_leaves = st.none() | st.booleans() | json_numbers | st.text(max_size=6)
json_data = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
parts = st.lists(
    st.one_of(
        st.builds(lambda text: {"text": text}, st.text(max_size=10)),
        st.builds(lambda data: {"data": data}, st.dictionaries(st.text(max_size=5), json_data, max_size=4)),
        st.builds(
            lambda over: {"data": citation(**over), "mediaType": "application/vnd.upperhand.citations+json"},
            st.fixed_dictionaries({}, optional={"base": json_data, "fielded": st.text(max_size=12)}),
        ),
        st.builds(lambda url, name: {"url": url, "filename": name}, st.text(max_size=8), st.text(max_size=4)),
        json_data.map(lambda value: {"mystery": value}),
    ),
    max_size=4,
)
cards = st.fixed_dictionaries(
    {"name": json_leaves},
    optional={
        "url": json_leaves,
        "capabilities": st.just({"extensions": [{"uri": "https://standards.upperhandai.com/ext/citations/v1"}]})
        | json_data,
        "defaultOutputModes": st.lists(st.sampled_from(["text/plain", "application/vnd.upperhand.citations+json"]))
        | json_leaves,
        "skills": st.lists(st.fixed_dictionaries({"id": st.just("s")}, optional={"outputModes": st.lists(st.text())})),
        "supportedInterfaces": st.lists(st.fixed_dictionaries({"url": json_leaves}), max_size=2),
        "version": st.just("1.0"),
    },
)
records = st.lists(
    st.one_of(
        st.builds(lambda n, p: jsonrpc_result({"task": v1_task(f"t{n}", p)}, n), st.integers(0, 5), parts),
        st.builds(
            lambda n, p: jsonrpc_result({"message": {"messageId": f"m{n}", "role": "ROLE_AGENT", "parts": p}}),
            st.integers(0, 5),
            parts,
        ),
        cards,
        st.builds(
            lambda code, message: {"jsonrpc": "2.0", "id": code, "error": {"code": code, "message": message}},
            json_leaves,
            st.text(max_size=8),
        ),
        json_data,
        json_values,
        st.sampled_from([b"not json", b"", b"   ", b'{"a": NaN}', b"[1, 2", b"\xff\xfe"]),
    ),
    min_size=1,
    max_size=8,
)


def jsonl(items: list) -> bytes:
    return b"".join((item if isinstance(item, bytes) else compact_json(item)) + b"\n" for item in items)


def sse(items: list) -> bytes:
    return b"".join(b"data: " + (item if isinstance(item, bytes) else compact_json(item)) + b"\n\n" for item in items)


def document(items: list) -> bytes:
    return b"[" + b",".join(item if isinstance(item, bytes) else compact_json(item) for item in items) + b"]"


CONTAINERS = {"t.jsonl": jsonl, "t.sse": sse, "t.json": document}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(records, st.sampled_from(sorted(CONTAINERS)), st.booleans())
def test_generated_transcripts_give_the_same_batches(schemas, tmp_path, items, name, compressed):
    data = CONTAINERS[name](items)
    path = tmp_path / (name + ".gz" if compressed else name)
    path.write_bytes(gzip.compress(data, mtime=0) if compressed else data)
    assert_same([on_disk(path)], schemas)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(records, min_size=2, max_size=4))
def test_generated_small_files_together_give_the_same_batches(schemas, tmp_path, files):
    paths = []
    for n, items in enumerate(files):
        path = tmp_path / f"f{n}.jsonl"
        path.write_bytes(jsonl(items))
        paths.append(path)
    assert_same([on_disk(path) for path in paths], schemas)


def test_a_file_whose_batches_fail_is_quarantined_whole_and_its_earlier_batches_void(schemas, tmp_path):
    """A schema the rows do not fit (a Part's data typed as integers) fails the file after its first
    batches were handed over: they are retracted, and the file is quarantined whole, as Python does."""
    broken = dict(schemas)
    broken["parts"] = pa.schema([f.with_type(pa.int64()) if f.name == "data" else f for f in schemas["parts"]])
    source, version = on_disk(ROOT / "sample_transcripts" / "versant-insights" / "rpc-v1.jsonl")
    expected, expected_outcomes = python_side([(source, version)], broken)
    index = _core.index_files([spec(source, version)], broken, MOMENT_US, RECORD_LIMIT, GZIP_LIMIT, batch_rows=3)
    items = list(index)
    assert (None, None) in items
    assert items[0][0] == "records"
    after = items[len(items) - items[::-1].index((None, None)) :]
    assert [name for name, _ in after] == [name for name, _ in expected] == ["records"]
    outcome, theirs = index.outcomes()[0], expected_outcomes[0]
    assert (
        {k: outcome[k] for k in ("container", "records", "quarantined", "recognised")}
        == {"container": "unreadable", "records": 1, "quarantined": 1, "recognised": 0}
        == {k: theirs[k] for k in ("container", "records", "quarantined", "recognised")}
    )
    prefix = f"{source.path}: file: the file could not be prepared: "
    assert outcome["problems"][0].startswith(prefix)
    assert theirs["problems"][0].startswith(prefix)
    mine = pa.Table.from_batches([pa.record_batch(after[0][1])])
    assert mine.drop_columns("reason").equals(expected[0][1].drop_columns("reason"))


def test_a_failing_file_of_a_chunk_is_quarantined_alone(schemas, tmp_path):
    """Small files together: the chunk's shared batches fail, and every file is prepared apart; each file
    that fails alone is quarantined whole, the others are stored, as `prepare`'s fallback does."""
    broken = dict(schemas)
    broken["parts"] = pa.schema([f.with_type(pa.int64()) if f.name == "data" else f for f in schemas["parts"]])
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b'{"no": "a2a"}\n')
    files = [on_disk(clean), on_disk(ROOT / "sample_transcripts" / "versant-insights" / "rpc-v1.jsonl")]
    expected, expected_outcomes = python_side(files, broken)
    got, outcomes = core_side(files, broken)
    assert [o["container"] for o in outcomes] == [o["container"] for o in expected_outcomes] == ["jsonl", "unreadable"]
    assert outcomes[0] == expected_outcomes[0]
    assert [name for name, _ in got] == [name for name, _ in expected]
    assert got[0][1].equals(expected[0][1])
