"""Every input bounded while streaming (issue 26, item 2): runs of blank lines, an SSE event of endless
`data:` lines, a gzip member that expands a thousandfold, and a task-store row that is not UTF-8. Each
test is one of the hostile inputs the issue quotes; each failed before the bound it tests."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.read import containers
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task

MIB = 1 << 20


def task_line(task_id: str) -> bytes:
    return orjson.dumps(jsonrpc_result(v1_task(task_id, v1_cited_parts()))) + b"\n"


def ingest(db: Path, *paths: str | Path) -> dict:
    result = CliRunner().invoke(main, ["ingest", "--db", str(db), "--json", *map(str, paths)])
    assert result.exit_code in (0, 1), result.output
    return orjson.loads(result.stdout)


def export_files(db: Path, folder: Path) -> None:
    result = CliRunner().invoke(main, ["export", "--db", str(db), "--raw", "--files", str(folder)])
    assert result.exit_code == 0, result.output


def records_by_kind(db: Path) -> dict[str, int]:
    with Archive.open(str(db), read_only=True) as archive:
        return dict(rows(archive, "SELECT kind, count(*) FROM records GROUP BY kind"))


def quarantined(db: Path) -> list[tuple]:
    with Archive.open(str(db), read_only=True) as archive:
        return rows(archive, "SELECT locator, reason FROM records WHERE status = 'quarantined' ORDER BY seq")


@pytest.mark.slow
def test_a_file_of_blank_lines_is_a_few_records_and_exports_as_it_was(tmp_path):
    """5 MB of newlines took 105 s and left 5,242,880 records in a 123 MB archive."""
    data = b"\n" * (5 * MIB) + task_line("t1") + b" \t\r\n" * 1000 + task_line("t2") + b"\n\n"
    path = tmp_path / "in" / "blank.jsonl"
    path.parent.mkdir()
    path.write_bytes(data)
    db = tmp_path / "a.duckdb"
    summary = ingest(db, path)
    assert (summary["records"], summary["tasks"]) == (2, 2)
    assert records_by_kind(db) == {"filler": 5 + 1 + 1, "json": 2}
    export_files(db, tmp_path / "out")
    assert (tmp_path / "out" / "blank.jsonl").read_bytes() == data


@pytest.mark.slow
def test_a_lineage_stored_a_record_a_blank_line_grows_and_exports_as_it_is(tmp_path):
    """An archive written before runs of blank lines were one record holds a filler record a line; the file
    grown and ingested again (its runs now read as one record each) still exports byte for byte."""
    path = tmp_path / "in" / "grown.jsonl"
    path.parent.mkdir()
    first = task_line("t1") + b"\n\n\n" + task_line("t2") + b"\n\n"
    path.write_bytes(first)
    db = tmp_path / "a.duckdb"
    ingest(db, path)
    with Archive.open(str(db)) as archive:  # as the version before wrote it: a record a blank line
        runs = rows(archive, "SELECT * FROM records WHERE kind = 'filler' AND octet_length(raw) > 1")
        columns = [column for (column, *_rest) in rows(archive, "DESCRIBE records")]
        archive.con.execute("DELETE FROM records WHERE kind = 'filler' AND octet_length(raw) > 1")
        for run in runs:
            record = dict(zip(columns, run, strict=True))
            for index in range(len(record["raw"])):
                line = {
                    **record,
                    "record_id": f"{record['record_id']}-{index}",
                    "seq": record["seq"] + index,
                    "locator": f"line {record['line'] + index}",
                    "line": record["line"] + index,
                    "byte_offset": record["byte_offset"] + index,
                    "raw": b"\n",
                }
                marks = ", ".join("?" for _ in columns)
                archive.con.execute(f"INSERT INTO records VALUES ({marks})", list(line.values()))
        assert rows(archive, "SELECT count(*) FROM records WHERE kind = 'filler'") == [(5,)]
    grown = first + b"\n\n" + task_line("t3") + b"\n"
    path.write_bytes(grown)
    assert ingest(db, path)["tasks"] == 3
    export_files(db, tmp_path / "out")
    assert (tmp_path / "out" / "grown.jsonl").read_bytes() == grown


@pytest.mark.slow
def test_an_sse_event_past_the_record_limit_is_quarantined_with_its_place_and_the_rest_kept(tmp_path, monkeypatch):
    """An SSE event with endless `data:` lines and no blank line was held whole: 500 MB of it peaked at
    2,672 MiB; the record limit did not apply to a multi-line event."""
    monkeypatch.setattr(containers, "RECORD_LIMIT", MIB)
    line = b"data: " + b"x" * 1000 + b"\n"
    good = b"data: " + task_line("t1")
    data = b"data: " + task_line("t0") + b"\nevent: message\n" + line * 3000 + b"\n" + good + b"\n"
    path = tmp_path / "in" / "stream.sse"
    path.parent.mkdir()
    path.write_bytes(data)
    db = tmp_path / "a.duckdb"
    summary = ingest(db, path)
    assert (summary["tasks"], summary["quarantined"]) == (2, 1)
    size = len(b"event: message\n" + line * 3000 + b"\n")
    assert quarantined(db) == [
        (
            "event 2 (line 3)",
            f"an SSE event of {size} bytes, past the record limit of {MIB} bytes (ARCHIVER_RECORD_LIMIT); "
            "its bytes are not stored",
        )
    ]


@pytest.mark.slow
def test_a_gzip_member_of_newlines_past_the_ratio_is_refused_as_it_streams(tmp_path):
    """A 1 MB gzip member holding 1 GiB of newlines was still running after 26 minutes (8.6 billion filler
    rows extrapolated). Now it is refused once it expands past the ratio, the records before it kept."""
    path = tmp_path / "in" / "bomb.jsonl.gz"
    path.parent.mkdir()
    member = gzip.compress(b"\n" * 64 * MIB, mtime=0)
    path.write_bytes(gzip.compress(task_line("t1"), mtime=0) + member * 16)  # 1 GiB of newlines
    assert path.stat().st_size < 2 * MIB
    db = tmp_path / "a.duckdb"
    summary = ingest(db, path)
    assert (summary["tasks"], summary["quarantined"]) == (1, 1)
    [(locator, reason)] = quarantined(db)
    assert locator.endswith("(the whole file as stored)")
    assert reason.endswith(f"past the ratio of {containers.GZIP_RATIO} (ARCHIVER_GZIP_RATIO)"), reason
    assert sum(records_by_kind(db).values()) < 40


@pytest.mark.slow
def test_a_sqlite_store_row_not_in_utf8_is_quarantined_with_its_table_and_rowid_and_the_rest_kept(tmp_path):
    """One row with text that is not UTF-8 made the whole store "not a readable task store"."""
    path = tmp_path / "store.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE tasks (id TEXT PRIMARY KEY, context_id TEXT, status TEXT, kind TEXT, artifacts TEXT)")
    for task_id in ("t1", "t2", "t3"):
        task = v1_task(task_id, v1_cited_parts())
        cells = (task_id, "ctx-1", orjson.dumps(task["status"]).decode(), "task", orjson.dumps(task["artifacts"]))
        con.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, CAST(? AS TEXT))", cells)
    con.execute("UPDATE tasks SET artifacts = CAST(replace(artifacts, 'answer', X'616EFF') AS TEXT) WHERE id = 't2'")
    con.commit()
    con.close()
    db = tmp_path / "a.duckdb"
    summary = ingest(db, path)
    assert (summary["tasks"], summary["quarantined"]) == (2, 1)
    [(locator, reason)] = quarantined(db)
    assert locator == "tasks rowid 2"
    assert reason.startswith("column 'artifacts' is not UTF-8 text (byte 0xff at ")
    export_files(db, tmp_path / "out")
    exported = sqlite3.connect(tmp_path / "out" / "store.sqlite")
    assert [row for (row,) in exported.execute("SELECT id FROM tasks ORDER BY rowid")] == ["t1", "t2", "t3"]
    assert "an\\xff" in exported.execute("SELECT artifacts FROM tasks WHERE id = 't2'").fetchone()[0]


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 3, 1000])
def test_filler_runs_never_pass_the_record_limit(tmp_path, monkeypatch, limit):
    monkeypatch.setattr(containers, "RECORD_LIMIT", limit)
    path = tmp_path / "in" / "blank.jsonl"
    path.parent.mkdir()
    data = b"\n" * 5000 + b"\r\n" * 100
    path.write_bytes(data)
    db = tmp_path / "a.duckdb"
    ingest(db, path)
    with Archive.open(str(db), read_only=True) as archive:
        sizes = [size for (size,) in rows(archive, "SELECT octet_length(raw) FROM records ORDER BY seq")]
    assert max(sizes) <= max(limit, 2)
    assert sum(sizes) == len(data)
