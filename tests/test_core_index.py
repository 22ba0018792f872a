"""The compiled core's `index_files` (`archiver/core/src/{load,index.rs}`) against the Python `prepare` it
replaced, frozen: for every sample and test-corpus file, small files prepared together, batches handed over
at small limits, files in memory, unreadable and of task stores, a generated corpus and generated
transcripts, the Arrow batches (table by table: rows, schema, every column's values) and the outcomes that
the Python path gave are in `tests/snapshots/core/index.jsonl.gz` (`tests/snapshots/core/make.py` wrote
them from the tag `python-normaliser-last`, with its `tests/python_prepare.py`). The core must give them
exactly. Files are named by relative paths, so that the rows are the same wherever the repository is."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from archiver import _core
from archiver.load.schemas import arrow_schemas
from archiver.load.versions import new_version
from archiver.read.containers import (
    GZIP_LIMIT,
    RECORD_LIMIT,
    SourceFile,
    StoreTable,
    is_sqlite,
    sqlite_rows,
    store_rows,
)
from archiver.store import migrations
from tests.snapshots.core import frozen
from tests.transcripts import jsonrpc_result, v1_cited_parts, v1_task

ROOT = Path(__file__).resolve().parent.parent
MOMENT = datetime(2026, 4, 20, 10, 0, 0, 123456, tzinfo=UTC)
MOMENT_US = int(MOMENT.timestamp()) * 1_000_000 + MOMENT.microsecond
SNAPSHOT = frozen.read("index")


@pytest.fixture(scope="module")
def schemas(tmp_path_factory) -> dict:
    """The Arrow schemas of a real migrated archive on disk."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("archive") / "index.duckdb"))
    migrations.upgrade(con)
    try:
        return arrow_schemas(con)
    finally:
        con.close()


def version_of(source: SourceFile, data: bytes):
    return new_version(source.path, hashlib.sha256(data).hexdigest(), len(data), None, None)


def on_disk(path: Path):
    source = SourceFile.on_disk(str(path))
    return source, version_of(source, path.read_bytes())


def named(path: Path, name: str):
    """A file on disk named `name` (relative, as the snapshot names it)."""
    source = SourceFile(name, location=str(path))
    return source, version_of(source, path.read_bytes())


def spec(source: SourceFile, version) -> dict:
    """What the ingest hands the core for one file."""
    base = {"path": source.path, "key": version.key, "sha256": version.sha256, "size": version.size}
    if source.unreadable is not None:
        return {**base, "unreadable": source.unreadable}
    if source.store is not None:
        return {
            **base,
            "rows": store_rows(source.data, source.store),
            "container": source.store.kind,
            "data": source.data,
        }
    where = {"data": source.data} if source.data is not None else {"open": os.fsencode(source.fs_path)}
    if source.data is None and is_sqlite(source):
        try:
            return {**base, **where, "rows": sqlite_rows(source), "container": "sqlite"}
        except sqlite3.DatabaseError as exc:
            return {
                **base,
                **where,
                "refused": f"SQLite file is not a readable task store: {exc}",
                "container": "sqlite",
            }
    return {**base, **where}


def core_side(files: list, schemas: dict, **limits) -> tuple[list[tuple[str, pa.Table]], list[dict]]:
    index = _core.index_files(
        [spec(source, version) for source, version in files], schemas, MOMENT_US, RECORD_LIMIT, GZIP_LIMIT, **limits
    )
    tables = []
    for name, batch in index:
        if name is None:  # what came before is void
            tables = []
            continue
        tables.append((name, as_frozen(name, pa.Table.from_batches([pa.record_batch(batch)]))))
    return tables, index.outcomes()


def as_frozen(name: str, table: pa.Table) -> pa.Table:
    """A table without what the frozen Python path never made: the column `records.yields`, and the note
    of an `ok` record that yields nothing (its `reason`; tests/test_yields.py tests both); the claims'
    `unit`, `stated` and `cell`, and the claims stated in strings (tests/test_stated_claims.py)."""
    if name == "claims" and "stated" in table.column_names:
        return table.filter(pc.is_null(table["stated"])).drop_columns(["unit", "stated", "cell"])
    if name != "records" or "yields" not in table.column_names:
        return table
    noted = pc.equal(table["yields"], "nothing")
    reason = pc.if_else(pc.fill_null(noted, False), pa.scalar(None, pa.string()), table["reason"])
    at = table.column_names.index("reason")
    return table.set_column(at, table.schema.field("reason"), reason).drop_columns(["yields"])


def assert_frozen(files: list, schemas: dict, expected: dict, **limits) -> list[tuple[str, pa.Table]]:
    """The core's batches and outcomes for `files` are the frozen ones (told table by table, column by column)."""
    got, outcomes = core_side(files, schemas, **limits)
    assert frozen.text(outcomes) == frozen.text(expected["outcomes"])
    forms = [frozen.table_form(name, table) for name, table in got]
    assert [(f["table"], f["rows"]) for f in forms] == [(f["table"], f["rows"]) for f in expected["tables"]]
    for mine, theirs in zip(forms, expected["tables"], strict=True):
        assert mine["schema"] == theirs["schema"], mine["table"]
        for column, values in theirs["columns"].items():
            assert mine["columns"].get(column) == values, f"{mine['table']}.{column}"
        assert mine == theirs
    return got


def files_of(case: dict) -> list:
    stale = [
        name
        for name, digest in zip(case["in"]["files"], case["in"]["sha256"], strict=True)
        if not (ROOT / name).is_file() or frozen.sha256_of(ROOT / name) != digest
    ]
    assert not stale, f"changed since the snapshot (run tests/snapshots/core/make.py): {stale}"
    return [named(ROOT / name, name) for name in case["in"]["files"]]


CORPUS = {case["in"]["files"][0]: case for case in SNAPSHOT["corpus"]}


def test_the_corpus_is_every_file_the_tests_ingest():
    assert len(CORPUS) > 40
    assert any(name.startswith("sample_transcripts/") for name in CORPUS)
    assert any(name.startswith("tests/") for name in CORPUS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_file_the_tests_ingest_gives_the_same_batches(name, schemas):
    case = CORPUS[name]
    assert_frozen(files_of(case), schemas, case["out"])


def test_small_files_prepared_together_give_the_same_batches(schemas):
    (case,) = SNAPSHOT["together"]
    assert len(case["in"]["files"]) > 20
    assert_frozen(files_of(case), schemas, case["out"])


@pytest.mark.slow
def test_batches_are_handed_over_at_the_same_rows(schemas):
    """Tiny hand-over limits: a file becomes many batches, at the same rows as Python's."""
    cases = SNAPSHOT["batches"]
    assert len(cases) == 4
    for case in cases:
        got = assert_frozen(files_of(case), schemas, case["out"], **case["in"]["batch"])
        assert len(got) > 3


def test_files_in_memory_unreadable_and_of_task_stores(schemas):
    data = b'{"jsonrpc": "2.0", "id": 1, "result": {"id": "t1", "contextId": "c", "status": {"state": "completed"}}}\n'
    stdin = SourceFile("<stdin>", data=data)
    gone = SourceFile("gone.jsonl", unreadable="cannot read the file: No such file or directory")
    table = StoreTable("postgresql", "tasks", ("id",))
    rows = (ROOT / "tests" / "stores" / "a2a-js-rows.json").read_bytes()
    store_data = b"\n".join(orjson.dumps(row) for row in orjson.loads(rows)["first"])
    store = SourceFile("postgresql://db/tasks", data=store_data, store=table)
    sources = {
        source.path: (source, version_of(source, raw))
        for source, raw in ((stdin, data), (gone, b""), (store, store_data))
    }
    cases = SNAPSHOT["elsewhere"]
    assert len(cases) == 4
    for case in cases:
        assert_frozen([sources[path] for path in case["in"]], schemas, case["out"])


def test_generated_corpus(schemas, tmp_path):
    from benchmarks.generate import generate

    generate(tmp_path / "corpus", tasks=60, tasks_per_file=20)
    cases = SNAPSHOT["generated_corpus"]
    assert len(cases) > 3
    for case in cases:
        files = []
        for name, digest in zip(case["in"]["files"], case["in"]["sha256"], strict=True):
            path = tmp_path / "corpus" / name
            assert frozen.sha256_of(path) == digest, f"benchmarks.generate wrote {name} otherwise (run make.py)"
            files.append(named(path, name))
        assert_frozen(files, schemas, case["out"])


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
    raw = orjson.dumps(jsonrpc_result({"kind": "task", **task})) + b"\n" + b'{"no": 1}\n'
    (case,) = SNAPSHOT["huge"]
    assert hashlib.sha256(raw).hexdigest() == case["in"], "the huge file is made otherwise (run make.py)"
    path = tmp_path / "huge.jsonl"
    path.write_bytes(raw)
    got, _ = core_side([named(path, "huge.jsonl")], schemas)
    assert [n for n, _ in got].count("parts") == 3  # the huge Part alone, its buffer not copied
    assert {n for n, _ in got} == set(case["out"])
    for name, theirs in case["out"].items():
        mine = frozen.table_form(name, pa.concat_tables([t for n, t in got if n == name]))
        assert mine == theirs, name


def written_files(tmp_path: Path, items: list) -> list:
    folder = Path(os.path.join(tmp_path, f"case{len(list(tmp_path.iterdir()))}"))
    folder.mkdir()
    files = []
    for name, data in items:
        (folder / name).write_bytes(data)
        files.append(named(folder / name, name))
    return files


@pytest.mark.slow
def test_generated_transcripts_give_the_same_batches(schemas, tmp_path):
    cases = SNAPSHOT["generated"]
    assert len(cases) >= 100
    assert len({frozen.text(case["in"]) for case in cases}) >= 90
    for case in cases:
        assert_frozen(written_files(tmp_path, case["in"]), schemas, case["out"])


@pytest.mark.slow
def test_generated_small_files_together_give_the_same_batches(schemas, tmp_path):
    cases = SNAPSHOT["generated_together"]
    assert len(cases) >= 30
    for case in cases:
        assert_frozen(written_files(tmp_path, case["in"]), schemas, case["out"])


def _broken(schemas: dict) -> dict:
    broken = dict(schemas)
    broken["parts"] = pa.schema([f.with_type(pa.int64()) if f.name == "data" else f for f in schemas["parts"]])
    return broken


def test_a_file_whose_batches_fail_is_quarantined_whole_and_its_earlier_batches_void(schemas):
    """A schema the rows do not fit (a Part's data typed as integers) fails the file after its first
    batches were handed over: they are retracted, and the file is quarantined whole, as Python did."""
    (case,) = SNAPSHOT["broken_schema"]
    expected = case["out"]
    source, version = named(ROOT / case["in"], case["in"])
    index = _core.index_files(
        [spec(source, version)], _broken(schemas), MOMENT_US, RECORD_LIMIT, GZIP_LIMIT, batch_rows=3
    )
    items = list(index)
    assert (None, None) in items
    assert items[0][0] == "records"
    after = items[len(items) - items[::-1].index((None, None)) :]
    assert [name for name, _ in after] == expected["names"] == ["records"]
    outcome, theirs = index.outcomes()[0], expected["outcomes"][0]
    keys = ("container", "records", "quarantined", "recognised")
    assert (
        {k: outcome[k] for k in keys}
        == {"container": "unreadable", "records": 1, "quarantined": 1, "recognised": 0}
        == {k: theirs[k] for k in keys}
    )
    prefix = f"{source.path}: file: the file could not be prepared: "
    assert outcome["problems"][0].startswith(prefix)
    assert theirs["problems"][0].startswith(prefix)
    mine = as_frozen("records", pa.Table.from_batches([pa.record_batch(after[0][1])]))
    assert frozen.table_form("records", mine.drop_columns("reason")) == expected["first"]


def test_a_failing_file_of_a_chunk_is_quarantined_alone(schemas, tmp_path):
    """Small files together: the chunk's shared batches fail, and every file is prepared apart; each file
    that fails alone is quarantined whole, the others are stored, as `prepare`'s fallback did."""
    (case,) = SNAPSHOT["broken_chunk"]
    expected = case["out"]
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b'{"no": "a2a"}\n')
    files = [named(clean, "clean.jsonl"), named(ROOT / case["in"][1], case["in"][1])]
    got, outcomes = core_side(files, _broken(schemas))
    assert (
        [o["container"] for o in outcomes] == [o["container"] for o in expected["outcomes"]] == ["jsonl", "unreadable"]
    )
    assert frozen.text(outcomes[0]) == frozen.text(expected["outcomes"][0])
    assert [name for name, _ in got] == expected["names"]
    assert frozen.table_form(*got[0]) == expected["first"]
