"""`archiver ingest --follow DIR`: a real process following a spool while segments are closed into it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.errors import InputError
from tests.spool_segments import Stream, rpc_exchanges, sample_events, stream_request, stream_segment, unary_segment
from tests.test_interrupts import assert_all_gone, check

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = "rec-20261130T174000000000-0a1b2c3d-{:06d}.{}"


def close_segment(spool: Path, seq: int, write) -> Path:
    """A segment written as `<name>.open`, then renamed into place, as the proxy closes one."""
    final = spool / SEGMENT.format(seq, "jsonl" if write is unary_segment else "sse")
    written = write(final.with_name(final.name + ".open"))
    os.rename(written, final)
    return final


def unary(seq: int):
    return lambda path: unary_segment(path, rpc_exchanges("versant-insights/rpc-v1.jsonl", f"u{seq}"))


def streamed(path: Path) -> Path:
    events = sample_events("legacy-funnel/stream-v03.sse")
    return stream_segment(path, [Stream("s1", stream_request(events, "message/stream"), events)])


def start_follow(spool: Path, db: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "archiver",
            "ingest",
            "--follow",
            str(spool),
            "--db",
            str(db),
            "--interval",
            "0.2",
            "--json",
            "--workers",
            "1",
            *extra,
        ],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def next_pass(process: subprocess.Popen) -> dict:
    line = process.stdout.readline()
    assert line, process.stderr.read()
    return json.loads(line)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_follow_ingests_closed_segments_as_they_appear_and_stops_cleanly(tmp_path, signum, code):
    spool, db = tmp_path / "spool", tmp_path / "a.duckdb"
    spool.mkdir()
    first = close_segment(spool, 1, unary(1))
    process = start_follow(spool, db)
    try:
        assert next_pass(process)["files"] == 1
        (spool / (SEGMENT.format(3, "jsonl") + ".open")).write_text('{"a2a_record": 1, "kind": "exch')
        second = close_segment(spool, 2, streamed)
        picked = next_pass(process)
        assert (picked["files"], picked["quarantined"], picked["unrecognised_files"]) == (1, 0, [])
        time.sleep(0.6)  # passes that find nothing new print nothing
        process.send_signal(signum)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, err
    assert out == ""
    assert err.strip().splitlines()[-1].startswith(f"interrupted by {signal.Signals(signum).name}: committed 2 files (")
    assert_all_gone(process.pid)
    assert check(db).returncode == 0
    with Archive.open(str(db)) as archive:
        stored = sorted(path for (path,) in archive.con.execute("SELECT path FROM sources").fetchall())
        origin = archive.stats()["origin_copies"]
    assert stored == [str(first), str(second)]
    assert origin > 0


@pytest.mark.slow
def test_readers_get_in_between_passes_and_a_pass_finding_readers_waits_for_the_next(tmp_path):
    """A follow into a file archive holds it only while a pass stores: a query started while it follows
    answers; a reader holding the archive past --wait makes the pass say so, and the segment is stored later."""
    spool, db = tmp_path / "spool", tmp_path / "a.duckdb"
    spool.mkdir()
    close_segment(spool, 1, unary(1))
    process = start_follow(spool, db, "--wait", "0.3")
    try:
        assert next_pass(process)["files"] == 1
        stats = subprocess.run([sys.executable, "-m", "archiver", "stats", "--json", "--db", str(db), "--wait", "0"],
                               cwd=ROOT, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["origin_copies"] > 0
        with Archive.open(str(db), read_only=True):  # a reader holding the file
            close_segment(spool, 2, streamed)
            waited = process.stderr.readline()
        assert "the new segments wait for the next pass" in waited
        assert "busy" in waited
        assert next_pass(process)["files"] == 1  # stored once the reader has gone
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    with Archive.open(str(db)) as archive:
        assert archive.con.execute("SELECT count(*) FROM sources").fetchone()[0] == 2


@pytest.mark.slow
def test_follow_as_a_library_stops_when_asked_and_stores_each_segment_once(tmp_path):
    spool, db = tmp_path / "spool", tmp_path / "a.duckdb"
    spool.mkdir()
    close_segment(spool, 1, unary(1))
    passes = []

    def until() -> bool:
        if len(passes) == 1 and not (spool / SEGMENT.format(2, "sse")).exists():
            close_segment(spool, 2, streamed)
        return len(passes) == 2

    with Archive.open(str(db)) as archive:
        total = archive.follow(str(spool), interval=0.01, on_pass=passes.append, until=until)
        again = archive.ingest([str(spool)])
    assert [p.files for p in passes] == [1, 1]
    assert (total.files, total.quarantined) == (2, 0)
    assert (again.files, again.files_unchanged) == (2, 2)


@pytest.mark.slow
def test_follow_of_a_missing_directory_is_one_error(tmp_path):
    with Archive.open(str(tmp_path / "a.duckdb")) as archive, pytest.raises(InputError, match="no such directory"):
        archive.follow(str(tmp_path / "nope"))
    from click.testing import CliRunner

    from archiver.cli import main

    result = CliRunner().invoke(main, ["ingest", "--follow", str(tmp_path / "nope"), "--db", str(tmp_path / "b")])
    assert (result.exit_code, result.output) == (1, f"Error: {tmp_path / 'nope'}: no such directory\n")


@pytest.mark.lake
def test_follow_writes_a_lake_as_one_of_a_fleet(tmp_path, tmp_path_factory, monkeypatch):
    """A lake writer following a spool (a SQLite catalog, which admits several writers) stores what an
    ingest of the same segments into one file stores, and marks the same origin copies."""
    pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed")
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path_factory.getbasetemp() / "duckdb-extensions"))
    spool = tmp_path / "spool"
    spool.mkdir()
    close_segment(spool, 1, unary(1))
    lake, data = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}", str(tmp_path / "lake-data")
    passes = []

    def until() -> bool:
        if len(passes) == 1 and not (spool / SEGMENT.format(2, "sse")).exists():
            close_segment(spool, 2, streamed)
        return len(passes) == 2

    with Archive.open(lake, data_path=data) as archive:
        archive.follow(str(spool), interval=0.01, on_pass=passes.append, until=until)
        lake_stats = archive.stats()
        lake_origins = archive.con.execute("SELECT * EXCLUDE (copy_ids) FROM origin_copies ORDER BY ALL").fetchall()
    with Archive.open(str(tmp_path / "one.duckdb")) as archive:
        archive.ingest([str(spool)])
        file_stats = archive.stats()
        file_origins = archive.con.execute("SELECT * EXCLUDE (copy_ids) FROM origin_copies ORDER BY ALL").fetchall()
    assert [p.files for p in passes] == [1, 1]
    assert lake_stats == file_stats
    assert lake_stats["origin_copies"] > 0
    assert lake_origins == file_origins


def test_the_command_and_the_library_follow_at_the_same_default_interval():
    from archiver.cli import main
    from archiver.ingest import FOLLOW_INTERVAL

    (interval,) = [p for p in main.commands["ingest"].params if p.name == "interval"]
    assert interval.default == FOLLOW_INTERVAL
