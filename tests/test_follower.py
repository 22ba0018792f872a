"""One spool follower (issue 30, item 1): `archiver ingest --follow` and `archiver record --db` store segments
through `ingest.Follower`: both see a spool as `ingest` walks it (`.open` segments and what `.archiverignore`
names are passed over), both wait while the archive is busy, and both stop, said once, on an error that
waiting cannot mend (an archive of a newer archiver), where the proxy's own loop used to try it for ever."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import duckdb
import pytest

from archiver.archive import Archive
from archiver.errors import ArchiveError
from archiver.ingest import Follower, follow
from archiver.record.ingesting import SegmentIngest
from archiver.record.metrics import RecordMetrics
from archiver.store.connection import ArchiveBusyError
from tests.test_follow import close_segment, unary
from tests.transcripts import rows


def newer(db: Path) -> None:
    """An archive migrated by a later archiver than this one."""
    with Archive.open(str(db)) as archive:
        archive.con.execute("INSERT INTO schema_migrations VALUES (999, 'from_the_future', now())")


def spool_with_an_ignored_segment(tmp_path: Path) -> tuple[Path, Path, Path]:
    spool = tmp_path / "spool"
    spool.mkdir()
    kept = close_segment(spool, 1, unary(1))
    ignored = close_segment(spool, 2, unary(2))
    (spool / ".archiverignore").write_text(ignored.name + "\n")
    (spool / "rec-unfinished.jsonl.open").write_text("{}\n")
    return spool, kept, ignored


@pytest.mark.slow
def test_the_proxy_finds_segments_as_ingest_walks_the_spool(tmp_path):
    spool, kept, _ = spool_with_an_ignored_segment(tmp_path)
    db = tmp_path / "a.duckdb"
    ingest = SegmentIngest(str(db), RecordMetrics(), wait=1.0, retry=0.05)
    ingest.start(spool)
    ingest.stop()
    with Archive.open(str(db), read_only=True) as archive:
        assert rows(archive, "SELECT DISTINCT path FROM sources") == [(str(kept),)]


@pytest.mark.slow
def test_the_proxy_stops_at_an_archive_it_must_not_write_and_says_so_once(tmp_path, caplog):
    spool, _, _ = spool_with_an_ignored_segment(tmp_path)
    db = tmp_path / "a.duckdb"
    newer(db)
    metrics = RecordMetrics()
    ingest = SegmentIngest(str(db), metrics, wait=0.1, retry=0.02)
    with caplog.at_level(logging.WARNING):
        ingest.start(spool)
        time.sleep(0.5)  # 25 retry periods: it tried once
        ingest.closed(spool / "rec-later.jsonl")
        time.sleep(0.1)
        assert not ingest.thread.is_alive()
        ingest.stop()
    assert isinstance(ingest.failed, ArchiveError)
    assert "newer than this archiver's" in metrics.last_ingest_error
    assert metrics.ingest_retries._value.get() == 0
    stopped = [r.getMessage() for r in caplog.records if "stopped ingesting" in r.getMessage()]
    assert len(stopped) == 1
    assert "recording goes on, and 1 segment(s) wait in the spool for `archiver ingest`" in stopped[0]


@pytest.mark.slow
def test_both_wait_while_the_archive_is_busy(tmp_path):
    spool, kept, _ = spool_with_an_ignored_segment(tmp_path)
    waits: list[Exception] = []
    tries = iter([ArchiveBusyError("busy"), None])

    def store(paths: list[str]):
        busy = next(tries)
        if busy:
            raise busy
        with Archive.open(str(tmp_path / "a.duckdb")) as archive:
            return archive.ingest(paths)

    follower = Follower(store, on_wait=waits.append)
    assert follower.fresh(str(spool)) == [str(kept)]
    assert follower.step([str(kept)]) is False
    assert follower.fresh(str(spool)) == [str(kept)]  # it waits
    assert follower.step([str(kept)]) is True
    assert follower.fresh(str(spool)) == []
    assert [str(w) for w in waits] == ["busy"]


@pytest.mark.slow
def test_ingest_follow_stops_at_an_archive_it_must_not_write(tmp_path):
    spool, _, _ = spool_with_an_ignored_segment(tmp_path)
    db = tmp_path / "a.duckdb"
    newer(db)

    def store(paths: list[str]):
        with Archive.open(str(db)) as archive:
            return archive.ingest(paths)

    with pytest.raises(ArchiveError, match="newer than this archiver's"):
        follow(str(spool), store, interval=0.01, on_busy=lambda exc: None, until=lambda: False)
    with duckdb.connect(str(db), read_only=True) as con:  # nothing was written to it
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (0,)
