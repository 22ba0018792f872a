"""archiver export: raw records byte for byte (JSON Lines or re-created files), and Parquet."""

from __future__ import annotations

import importlib.util
import io
import os
import re
import shutil
import sqlite3
from itertools import pairwise
from pathlib import Path

import duckdb
import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.export.raw import raw_entries
from tests.stored import WHOLE_RECORDS

from .lineage_data import SANTE, build, task
from .transcripts import SAMPLES, citation, v1_task

SSE = (
    ": keep-alive\r\n\r\n"
    "event: message\r\ndata: "
    + orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {
                "task": v1_task(
                    "s1",
                    [{"data": {"k": 1}}, {"data": citation(), "mediaType": "application/vnd.upperhand.citations+json"}],
                )
            },
        }
    ).decode()
    + "\r\n\r\n\n"
)


def store_db(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE tasks (id VARCHAR(36) PRIMARY KEY, context_id VARCHAR(36) NOT NULL, "
        "kind VARCHAR(16) NOT NULL, status JSON NOT NULL, artifacts JSON, history JSON, metadata JSON)"
    )
    value = v1_task(
        "db1", [{"data": {"q": 2.0}}, {"data": citation(), "mediaType": "application/vnd.upperhand.citations+json"}]
    )
    con.execute(
        "INSERT INTO tasks VALUES (?, ?, 'task', ?, ?, NULL, NULL)",
        ["db1", "ctx-db", orjson.dumps(value["status"]).decode(), orjson.dumps(value["artifacts"]).decode()],
    )
    con.commit()
    con.close()
    return str(path)


@pytest.fixture
def inputs(write, tmp_path):
    paths = build(write)
    paths.append(write("streams/s.sse", SSE))
    paths.append(write("streams/z.jsonl.gz", [task("gz1", [{"data": {"g": 3}}])], compress=True))
    paths.append(
        write(
            "docs/pretty.json", orjson.dumps(task("doc1", [{"data": {"d": 4}}]), option=orjson.OPT_INDENT_2) + b"\n\n"
        )
    )
    paths.append(write("lines/blank.jsonl", b"\n" + orjson.dumps(task("bl1", [{"data": {"b": 5}}])) + b"\n\n"))
    paths.append(store_db(tmp_path / "in" / "store" / "task-store.sqlite"))
    return paths


def records(archive: Archive, root: str) -> list[tuple]:
    rows = archive.con.execute(
        f"SELECT source_path, seq, locator, kind, sha256, raw FROM {WHOLE_RECORDS} AS r"
    ).fetchall()
    return sorted(
        (os.path.relpath(p, root).removesuffix(".gz"), seq, loc, kind, sha, bytes(raw))
        for p, seq, loc, kind, sha, raw in rows
    )


def index_counts(archive: Archive) -> dict:
    counts = archive.stats()
    counts.pop("sources")
    counts["claim_rows"] = len(list(archive.claims()))
    counts["citation_rows"] = sorted((r["study"], r["claims"], r["results"]) for r in archive.citations())
    return counts


@pytest.mark.slow
def test_raw_files_round_trip(archive, inputs, tmp_path):
    archive.ingest(inputs, workers=1)
    out = tmp_path / "out"
    made = archive.export(str(out), fmt="files")
    assert len(made) == len(inputs)
    assert (out / "streams" / "z.jsonl").exists()
    assert not (out / "streams" / "z.jsonl.gz").exists()
    for path in inputs:  # plain files come back identical, byte for byte
        if not path.endswith((".gz", ".sqlite")):
            assert (out / os.path.relpath(path, tmp_path / "in")).read_bytes() == Path(path).read_bytes()
    with Archive.open(str(tmp_path / "again.duckdb")) as again:
        again.ingest([str(out)], workers=1)
        assert index_counts(again) == index_counts(archive)
        assert records(again, str(out)) == records(archive, str(tmp_path / "in"))
        assert again.con.execute("SELECT container FROM sources WHERE path LIKE '%.sqlite'").fetchall() == [("sqlite",)]


@pytest.mark.slow
def test_raw_jsonl_in_ingest_order(archive, inputs):
    archive.ingest(inputs, workers=1)
    buffer = io.BytesIO()
    count = archive.export(buffer)
    entries = list(raw_entries(buffer.getvalue().splitlines()))
    assert count == len(entries) == archive.con.execute("SELECT count(*) FROM records").fetchone()[0]
    stored = {
        (p, s): bytes(r)
        for p, s, r in archive.con.execute(f"SELECT source_path, seq, raw FROM {WHOLE_RECORDS} AS r").fetchall()
    }
    assert all(stored[(e["source_path"], e["seq"])] == e["raw"] for e in entries)
    order = [e["source_path"] for e in entries]
    assert [p for i, p in enumerate(order) if i == 0 or order[i - 1] != p] == inputs  # files in ingest order
    assert all(a["seq"] < b["seq"] for a, b in pairwise(entries) if a["source_path"] == b["source_path"])


@pytest.mark.slow
def test_raw_export_selected_by_filters(archive, inputs, tmp_path):
    archive.ingest(inputs, workers=1)
    buffer = io.BytesIO()
    archive.export(buffer, study="Étude*")
    entries = list(raw_entries(buffer.getvalue().splitlines()))
    assert [e["source_path"].rsplit("/", 2)[-2:] for e in entries] == [["sante", "b.jsonl"]]
    made = archive.export(str(tmp_path / "sel"), fmt="files", source=["*/versant/*"])
    assert sorted(Path(m.path).name for m in made) == ["a.jsonl", "agent-card.json", "c.jsonl"]


@pytest.mark.slow
def test_cli_export(archive, inputs, tmp_path):
    archive.ingest(inputs, workers=1)
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    result = CliRunner().invoke(main, ["export", "--raw", "--task", "t1", "--db", db])
    assert result.exit_code == 0, result.output
    assert len(result.stdout_bytes.splitlines()) == 2
    result = CliRunner().invoke(main, ["export", "--raw", "--files", str(tmp_path / "files"), "--db", db])
    assert result.exit_code == 0
    assert "re-created" in result.output
    result = CliRunner().invoke(main, ["export", "--db", db])
    assert result.exit_code == 2
    assert "--raw or --format parquet" in result.output


@pytest.mark.slow
def test_parquet_partitioned_by_study_key(archive, inputs, tmp_path):
    archive.ingest(inputs, workers=1)
    archive.close()
    db, out = str(tmp_path / "archive.duckdb"), tmp_path / "pq"
    result = CliRunner().invoke(main, ["export", "--format", "parquet", str(out), "--db", db])
    assert result.exit_code == 0, result.output
    keys = {p.name for p in (out / "claim_citations").iterdir()}
    assert "study_key=etude-sante-2026_3bd7fecc" in keys
    assert "study_key=__HIVE_DEFAULT_PARTITION__" in keys
    assert all(re.fullmatch(r"study_key=([a-z0-9-]+_[0-9a-f]{8}|__HIVE_DEFAULT_PARTITION__)", key) for key in keys)
    con = duckdb.connect()
    with Archive.open(db, read_only=True) as opened:
        for table in ("citations", "claim_citations"):
            read = con.execute(
                f"SELECT count(*), count(DISTINCT study) FROM read_parquet('{out}/{table}/**/*.parquet',"
                " hive_partitioning = true)"
            ).fetchone()
            assert read == opened.con.execute(f"SELECT count(*), count(DISTINCT study) FROM {table}").fetchone()
        for table in ("results", "parts", "claims", "sources", "agent_cards", "rpc_errors"):
            assert (
                con.execute(f"SELECT count(*) FROM '{out}/{table}.parquet'").fetchone()
                == opened.con.execute(f"SELECT count(*) FROM {table}").fetchone()
            )


@pytest.fixture
def exported(archive, inputs, tmp_path) -> Path:
    """The `inputs` archive's index exported as Parquet."""
    archive.ingest(inputs, workers=1)
    archive.export(str(tmp_path / "pq"), fmt="parquet")
    return tmp_path / "pq"


def rows_of_study(rows: list[dict]) -> list[tuple]:
    """The claim lineage rows of the non-ASCII study, comparable across readers."""
    return sorted(
        (r["study"], r["study_key"], r["result_key"], r["pointer"], r["citation_hash"])
        for r in rows
        if r["study"] == SANTE["study"]
    )


@pytest.mark.slow
def test_parquet_readers_agree_on_a_non_ascii_study(exported):
    import polars
    import pyarrow.dataset

    table = str(exported / "claim_citations")
    by_duckdb = duckdb.connect().execute(
        f"SELECT * FROM read_parquet('{table}/**/*.parquet', hive_partitioning = true) WHERE study = ?",
        [SANTE["study"]],
    )
    by_duckdb = [dict(zip([d[0] for d in by_duckdb.description], row, strict=False)) for row in by_duckdb.fetchall()]
    by_pyarrow = pyarrow.dataset.dataset(table, format="parquet", partitioning="hive").to_table().to_pylist()
    by_polars = polars.read_parquet(f"{table}/**/*.parquet", hive_partitioning=True).to_dicts()
    expected = rows_of_study(by_duckdb)
    assert expected
    assert expected == rows_of_study(by_pyarrow) == rows_of_study(by_polars)
    assert {r["study_key"] for r in by_pyarrow if r["study"] is None} == {None}
    assert {r["study_key"] for r in by_polars if r["study"] is None} == {None}


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("java") is None or importlib.util.find_spec("pyspark") is None,
    reason="needs Java and pyspark (pip install 'a2a-archiver[spark]')",
)
def test_spark_reads_the_parquet_export_alike(exported):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    try:
        frame = spark.read.parquet(str(exported / "claim_citations"))
        by_spark = [row.asDict() for row in frame.where(frame.study == SANTE["study"]).collect()]
        nulls = {row.study_key for row in frame.where(frame.study.isNull()).collect()}
    finally:
        spark.stop()
    by_duckdb = duckdb.connect().execute(
        f"SELECT * FROM read_parquet('{exported}/claim_citations/**/*.parquet', hive_partitioning = true)"
    )
    by_duckdb = [dict(zip([d[0] for d in by_duckdb.description], row, strict=False)) for row in by_duckdb.fetchall()]
    assert rows_of_study(by_spark)
    assert rows_of_study(by_spark) == rows_of_study(by_duckdb)
    assert nulls == {None}


@pytest.mark.slow
@pytest.mark.skipif(not (SAMPLES / "manifest.json").exists(), reason="sample_transcripts/manifest.json not generated")
def test_samples_round_trip(tmp_path):
    manifest = orjson.loads((SAMPLES / "manifest.json").read_bytes())
    files = [str(SAMPLES / f["path"]) for f in manifest["files"]] + [
        str(SAMPLES / a["card"]) for a in manifest["agents"]
    ]
    with Archive.open(str(tmp_path / "a.duckdb")) as first, Archive.open(str(tmp_path / "b.duckdb")) as second:
        first.ingest(files, workers=1)
        first.export(str(tmp_path / "out"), fmt="files")
        second.ingest([str(tmp_path / "out")], workers=1)
        assert index_counts(second) == index_counts(first)
        assert records(second, str(tmp_path / "out")) == records(first, str(SAMPLES))


# --- issue 39: empty files and names that are not UTF-8 come back as they were -----------------------------


def _tree(top: Path) -> dict[bytes, bytes]:
    """Every file under `top`: its path's bytes (relative) and its bytes."""
    return {os.fsencode(path.relative_to(top)): path.read_bytes() for path in sorted(top.rglob("*")) if path.is_file()}


def _recreated(tmp_path: Path, top: Path, *given: str) -> Path:
    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest(list(given) or [str(top)], workers=1)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["export", "--raw", "--files", str(out), "--db", db])
    assert result.exit_code == 0, result.output
    return out


def test_empty_files_and_names_not_in_utf8_are_recreated(tmp_path):
    """`export --raw --files` left out an empty file, and wrote a name that is not UTF-8 under its escaped
    text (`b\\xff.jsonl`, four characters): each comes back as it was, beside its siblings."""
    top = tmp_path / "in"
    (top / "sub").mkdir(parents=True)
    (top / "a.jsonl").write_bytes((SAMPLES / "legacy-funnel" / "rpc-v03.jsonl").read_bytes())
    (top / "empty.jsonl").write_bytes(b"")
    (top / "sub" / "empty.jsonl").write_bytes(b"")
    (top / os.fsdecode(b"b\xff\xfe.jsonl")).write_bytes(b'{"x": 1}\n\n')
    (top / "lit\\xff.jsonl").write_bytes(b"\n")  # a name that reads as the escape of one
    (top / os.fsdecode(b"d\xe9")).mkdir()  # a folder's name too
    (top / os.fsdecode(b"d\xe9") / "c.jsonl").write_bytes(b'{"y": 2}\n')
    out = _recreated(tmp_path, top)
    assert _tree(out) == _tree(top)
    with Archive.open(str(tmp_path / "a.duckdb"), read_only=True) as archive:
        for given, name in [
            (str(top / "lit\\xff.jsonl"), "lit\\xff.jsonl"),  # the name as it is
            (str(top / "b\\xff\\xfe.jsonl"), os.fsdecode(b"b\xff\xfe.jsonl")),  # as the archiver prints it
            (os.fsdecode(os.fsencode(top) + b"/b\xff\xfe.jsonl"), os.fsdecode(b"b\xff\xfe.jsonl")),  # its bytes
        ]:
            made = archive.export(str(tmp_path / "one" / name), fmt="files", source=[given])
            assert [Path(m.path).name for m in made] == [name]


@pytest.mark.parametrize("name", [b"", b"b\xff.jsonl"])
def test_a_lone_empty_file_or_name_not_in_utf8_is_recreated(tmp_path, name):
    top = tmp_path / "in"
    top.mkdir()
    path = top / os.fsdecode(name or b"empty.jsonl")
    path.write_bytes(b"" if not name else b'{"x": 1}\n')
    out = _recreated(tmp_path, top, str(path))
    assert _tree(out) == _tree(top)
