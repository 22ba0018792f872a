"""The claim index kept by the writes that change it (`archiver.store.kept`, issue 40) is, after every write, what
its definition (the view `claim_citations_derived`) computes from the stored copies; and an answer never depends
on whether a refresh ran: a result still pending is read from the definition."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from archiver.archive import Archive
from archiver.store import cells, kept, views
from archiver.store.tables import CLAIM_INDEX_BY_TASK, CLAIM_INDEX_COLUMNS, CLAIM_INDEX_PENDING
from tests.test_audit_kept import audit_exact, db_command
from tests.test_counts_kept import counts_exact
from tests.test_migrations import first_version_archive
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

CARD = {
    "name": "Panel Agent",
    "url": "http://agent.example/",
    "version": "1",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [],
}


def state(db: Path | str) -> tuple[int, int, int, list[str]]:
    """The kept rows, the definition's rows, the pending results and the results whose kept rows differ."""
    with Archive.open(str(db), read_only=True) as archive:
        one = archive.con.execute
        return (
            one("SELECT count(*) FROM claim_index").fetchone()[0],
            one("SELECT count(*) FROM claim_citations_derived").fetchone()[0],
            kept.pending(archive.con),
            [key for (key,) in one(kept.differing()).fetchall()],
        )


def exact(db: Path | str) -> int:
    """Assert the index is kept: nothing pending, every result's rows its definition's, and the audit kept as
    well (`test_audit_kept`); the rows kept."""
    rows, derived, pending, differing = state(db)
    assert (pending, differing) == (0, [])
    assert rows == derived
    with Archive.open(str(db), read_only=True) as archive:
        audit_exact(archive.con)
        counts_exact(archive.con)
        assert archive.con.execute(cells.DIFFERING).fetchall() == []
    return rows


def claims_json(db: Path | str, *args: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "archiver", "query", "claims", "--db", str(db), "--format", "json", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def task_file(path: Path, task_id: str, share: float, timestamp: str = "2026-04-21T09:00:00Z") -> Path:
    task = v1_task(task_id, v1_cited_parts({"share": share}))
    task["status"]["timestamp"] = timestamp
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonrpc_result({"task": task})) + "\n")
    return path


def test_after_ingesting_the_samples_the_kept_index_is_its_definition(tmp_path):
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES)])
    assert exact(db) > 200


def test_a_card_ingested_later_names_the_agent_of_results_indexed_before(tmp_path):
    folder = tmp_path / "agent"
    task_file(folder / "tasks.jsonl", "t-1", 0.3)
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(folder)])
    assert {row["agent"] for row in claims_json(db)} == {None}
    (folder / "card.json").write_text(json.dumps(CARD))
    with Archive.open(str(db)) as archive:
        archive.ingest([str(folder)])
    assert {row["agent"] for row in claims_json(db)} == {"Panel Agent"}
    exact(db)


def test_a_growing_log_replaces_its_earlier_version_s_claims(tmp_path):
    """Bytes appended to a stored file extend its version, whose index rows replace the earlier version's."""
    path = task_file(tmp_path / "in" / "log.jsonl", "t-1", 0.3)
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(path)])
        before = archive.con.execute("SELECT DISTINCT source_sha256 FROM claim_index").fetchall()
    grown = task_file(tmp_path / "more.jsonl", "t-2", 0.4)
    with path.open("a") as log:
        log.write(grown.read_text())
    with Archive.open(str(db)) as archive:
        archive.ingest([str(path)])
        after = archive.con.execute("SELECT DISTINCT source_sha256 FROM claim_index WHERE task_id = 't-1'").fetchall()
    assert sorted((row["task_id"], row["value"]) for row in claims_json(db)) == [("t-1", 0.3), ("t-2", 0.4)]
    assert after != before  # the rows of the earlier version are gone: the extension holds t-1 now
    exact(db)


def test_a_result_stored_in_two_files_is_counted_once_with_its_latest_copy(tmp_path):
    db = tmp_path / "a.duckdb"
    first = task_file(tmp_path / "a" / "log.jsonl", "t-1", 0.3, "2026-04-21T09:00:00Z")
    second = task_file(tmp_path / "b" / "log.jsonl", "t-1", 0.3, "2026-04-22T09:00:00Z")
    for path in (first, second):  # in two ingests: the second touches a result the first indexed
        with Archive.open(str(db)) as archive:
            archive.ingest([str(path)])
    rows = claims_json(db)
    assert [(row["value"], row["source_path"]) for row in rows] == [(0.3, str(second))]
    with Archive.open(str(db), read_only=True) as archive:
        assert archive.con.execute("SELECT copies FROM claim_index").fetchall() == [(2,)]
    exact(db)


@pytest.mark.slow
def test_an_ingest_killed_after_its_commit_leaves_answers_exact_and_the_next_write_refreshes(tmp_path):
    """The refresh runs after the last commit: killed between them, the results it touched are pending, read from
    the definition, so every answer is what the refreshed index gives; the next ingest refreshes them."""
    db, clean = tmp_path / "a.duckdb", tmp_path / "clean.duckdb"
    with Archive.open(str(clean)) as archive:
        archive.ingest([str(SAMPLES)])
    killed = subprocess.run(
        [sys.executable, "-m", "archiver", "ingest", str(SAMPLES), "--db", str(db)],
        env={**os.environ, "ARCHIVER_KILL_AT": "commit"},
        capture_output=True,
    )
    assert killed.returncode == -9
    _, _, pending, _ = state(db)
    assert pending > 0
    for args in ((), ("--column", "s14r5"), ("--agent", "Meridian*")):
        assert claims_json(db, *args) == claims_json(clean, *args)
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES)])
    assert exact(db) == exact(clean)


def test_a_connection_that_wrote_reads_what_it_left_pending_from_the_definition(tmp_path, monkeypatch):
    """With nothing pending, a file archive's `claim_citations` is the index itself (`views.define_in`); a write on
    the same connection that leaves results pending (its refresh not run) defines the views again, so that
    connection, and a cursor of it, read the pending results from the definition."""
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES / "versant-insights")])
        view = "SELECT sql FROM duckdb_views() WHERE temporary AND view_name = 'claim_citations'"
        assert "pending" not in archive.con.execute(view).fetchone()[0]
        monkeypatch.setattr(kept, "refresh", lambda con, on_batch=None, batch=None: 0)
        archive.ingest([str(SAMPLES)])
        assert kept.pending(archive.con) > 0
        cursor = archive.con.cursor()
        for con in (archive.con, views.cursor(cursor)):
            read = con.execute("SELECT * FROM claim_citations ORDER BY ALL").fetchall()
            assert read == con.execute("SELECT * FROM claim_citations_derived ORDER BY ALL").fetchall()
            assert len(read) > 200


def test_an_archive_of_schema_14_builds_its_index_when_it_is_upgraded(tmp_path):
    db = tmp_path / "old.duckdb"
    first_version_archive(str(db), str(SAMPLES / "versant-insights"), tmp_path, version=14)
    with Archive.open(str(db)) as archive:
        assert archive.version() >= 15
    assert exact(db) > 0


def test_rows_healed_away_leave_the_index(tmp_path):
    """A file version whose `sources` row is gone was never committed: repair removes its rows, and its claims
    leave the index with them."""
    db = tmp_path / "a.duckdb"
    kept_file = task_file(tmp_path / "in" / "a.jsonl", "t-1", 0.3)
    torn = task_file(tmp_path / "in" / "b.jsonl", "t-2", 0.5)
    with Archive.open(str(db)) as archive:
        archive.ingest([str(kept_file), str(torn)])
        archive.con.execute("DELETE FROM sources WHERE path = ?", [str(torn)])
    with Archive.open(str(db)) as archive:
        assert archive.repair()
    assert [row["task_id"] for row in claims_json(db)] == ["t-1"]
    exact(db)


@pytest.mark.slow
def test_db_check_finds_a_kept_row_that_is_not_its_definition_and_repair_makes_it_again(tmp_path):
    db = tmp_path / "a.duckdb"
    shutil.copy(task_file(tmp_path / "in" / "a.jsonl", "t-1", 0.3), tmp_path / "in" / "b.jsonl")
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "in")])
        archive.con.execute("UPDATE claim_index SET study = 'Another Study'")
    checked = db_command(db, "check")
    assert checked.returncode == 1
    assert "problem: claim-index: 1 results" in checked.stderr
    assert "task:t-1" in checked.stderr
    repaired = db_command(db, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "claim index and kept audit made again: 1 results" in repaired.stdout
    assert db_command(db, "check").returncode == 0
    exact(db)


def test_every_reader_of_claims_reads_the_index(tmp_path):
    """`query claims`, `sql` and the export read the kept rows: a kept row changed behind the archiver's back shows
    in each (what `db check` exists to find)."""
    db = tmp_path / "a.duckdb"
    task_file(tmp_path / "in" / "a.jsonl", "t-1", 0.3)
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "in")])
        assert archive.con.execute("SELECT study FROM claim_index").fetchall() == [("Versant Mega Tracker",)]
        archive.con.execute("UPDATE claim_index SET study = 'Planted'")
    assert [row["study"] for row in claims_json(db)] == ["Planted"]
    done = subprocess.run(
        [sys.executable, "-m", "archiver", "sql", "SELECT study FROM claim_citations", "--db", str(db), "--format",
         "json"], capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(done.stdout) == [{"study": "Planted"}]


@pytest.mark.slow
def test_a_refresh_batch_that_runs_out_of_memory_is_halved_until_it_fits(tmp_path, monkeypatch):
    """DuckDB with more threads needs more memory for the same batch (CI's machine ran out at 200,000 results
    within 512 MB): the batch is rolled back and tried at half the size, and the index ends exact."""
    tried, made = [], []
    refresh_batch = kept._refresh_batch

    def short_of_memory(con, table, make, at, batch, key="result_key"):
        tried.append(batch)
        rows = refresh_batch(con, table, make, at, batch, key)  # done, then lost with the transaction, as DuckDB's
        if batch > 2 * kept.SMALLEST_BATCH:
            raise duckdb.OutOfMemoryException("failed to pin block")
        made.append(batch)
        return rows

    monkeypatch.setattr(kept, "_refresh_batch", short_of_memory)
    monkeypatch.setattr(kept, "REFRESH_CLAIMS", 10**12)  # batches of REFRESH_RESULTS, whatever the claims
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES)])
    halvings = [kept.REFRESH_RESULTS // 2**n for n in range(6)]
    assert tried[: len(halvings)] == halvings
    assert made
    assert max(made) == halvings[-1]
    exact(db)

    def out_of_memory(con, table, make, at, batch, key="result_key"):
        tried.append(batch)
        refresh_batch(con, table, make, at, batch, key)
        raise duckdb.OutOfMemoryException("failed to pin block")

    monkeypatch.setattr(kept, "_refresh_batch", out_of_memory)
    tried.clear()
    with Archive.open(str(db)) as archive, pytest.raises(duckdb.OutOfMemoryException):
        kept.rebuild(archive.con)  # down to the smallest batch, and still short of memory: it is said
    escalations = len(tried) - tried.index(kept.SMALLEST_BATCH)
    assert tried[-escalations:] == [kept.SMALLEST_BATCH] * escalations  # at the smallest, DuckDB's memory doubled
    assert kept.REFRESH_MEMORY_MB * 2 ** (escalations - 1) >= kept.REFRESH_MEMORY_MAX_MB
    assert state(db)[2] > 0  # nothing was refreshed: every result stays pending, read from the definition


def test_out_of_memory_inside_a_batch_is_halved_not_retried_as_a_conflict(tmp_path, monkeypatch):
    """An out-of-memory in a statement of the index's write (its cells' merge here) ends DuckDB's transaction; the
    write's clean-up of its temporary tables then failed ("Current transaction is aborted"), and that error, taken
    for a commit conflict, was retried at the same size until the 2 GB ingest stopped. The batch is halved."""
    tried, failed = [], []
    refresh_batch, merge = kept._refresh_batch, cells._merge

    def sized(con, table, make, at, batch, key="result_key"):
        tried.append(batch)
        return refresh_batch(con, table, make, at, batch, key)

    def short_of_memory(con):
        if len(failed) < 2:
            failed.append(1)
            with pytest.raises(duckdb.Error):
                con.execute("SELECT error('a statement that fails, as one out of memory does')")
            raise duckdb.OutOfMemoryException("failed to pin block")
        merge(con)

    monkeypatch.setattr(kept, "_refresh_batch", sized)
    monkeypatch.setattr(cells, "_merge", short_of_memory)
    monkeypatch.setattr(kept, "REFRESH_CLAIMS", 10**12)  # batches of REFRESH_RESULTS, whatever the claims
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES)])
    assert tried[:3] == [kept.REFRESH_RESULTS, kept.REFRESH_RESULTS // 2, kept.REFRESH_RESULTS // 4]
    exact(db)


def test_a_smallest_batch_short_of_memory_is_made_with_twice_the_memory(tmp_path, monkeypatch):
    """After a 2 GB ingest stored its results, its process held so much that 1,000 results' counts did not fit the
    refresh's bound: at the smallest batch the bound doubles, the batch is made within it, and the archive's limit
    is its own again after."""
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES)])
    refresh_batch, limits = kept._refresh_batch, []

    def fits_with_more(con, table, make, at, batch, key="result_key"):
        limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        rows = refresh_batch(con, table, make, at, batch, key)
        limits.append(limit)
        if len(limits) == 1:
            raise duckdb.OutOfMemoryException("failed to pin block")
        return rows

    monkeypatch.setattr(kept, "_refresh_batch", fits_with_more)
    monkeypatch.setattr(kept, "REFRESH_CLAIMS", 1)  # the smallest batch from the start
    with Archive.open(str(db)) as archive:
        before = archive.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        archive.con.execute(f"INSERT INTO {CLAIM_INDEX_PENDING} SELECT DISTINCT result_key FROM results")
        kept.refresh(archive.con)
        after = archive.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert limits[:2] == [f"{kept.REFRESH_MEMORY_MB}.0 MiB", f"{2 * kept.REFRESH_MEMORY_MB}.0 MiB"], limits
    assert after not in limits
    assert after[:3] == before[:3]  # the archive's own again, as DuckDB rounds it back
    exact(db)


def test_a_halved_batch_grows_again_after_batches_that_fit(tmp_path):
    """A 2 GB ingest ran out of memory once in its claim index's refresh, and every batch after it was halved
    again, down to 1,562 of 550,111 results, each choosing its keys anew from every pending key (391 s). The
    pending keys are queued once, a halved batch doubles again after `GROW_AFTER` batches that fit, and every
    key is made once."""
    con = duckdb.connect(str(tmp_path / "k.duckdb"))
    con.execute("CREATE TABLE waiting AS SELECT range AS k FROM range(200) UNION ALL SELECT 7")  # 7 twice
    sizes, made = [], []

    def make(con, chosen):
        keys = [k for (k,) in con.execute(f"SELECT k FROM waiting WHERE {chosen}").fetchall()]
        sizes.append(len(set(keys)))
        if len(sizes) == 1:
            raise duckdb.OutOfMemoryException("failed to pin block")
        made.extend(set(keys))

    assert kept.refreshing(con, "waiting", make, "stays pending", batch=32, key="k", smallest=4) == 200
    assert sorted(made) == list(range(200))
    assert con.execute("SELECT count(*) FROM waiting").fetchone()[0] == 0
    assert sizes == [32, *[16] * kept.GROW_AFTER, 32, 32, 200 - 16 * kept.GROW_AFTER - 64]


def test_one_task_s_claims_are_read_by_the_index_on_task(tmp_path):
    """A DuckDB file keeps its claim index with `task_id` first and an ART index on it (migration 0018): one
    task's claims, asked as `query claims --task` asks them (through `claim_citations` and the verdicts' join),
    are read by an index scan, not a scan of every claim; a reader still sees the definition's columns in its
    order, and a write keeps the index (a result made again by a later ingest)."""
    db = tmp_path / "a.duckdb"
    for n in range(3):
        task_file(tmp_path / "in" / f"{n}.jsonl", f"t-{n}", 0.25 + n / 10)
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "in")])
    task_file(tmp_path / "in" / "1.jsonl", "t-1", 0.75, timestamp="2026-04-22T09:00:00Z")  # a new copy of t-1
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "in")])
    with Archive.open(str(db), read_only=True) as archive:
        con = archive.con
        assert con.execute("SELECT index_name, expressions FROM duckdb_indexes()").fetchall() == [
            (CLAIM_INDEX_BY_TASK, "[task_id]")
        ]
        for view in ("claim_citations", "claim_citations_derived"):
            assert tuple(name for name, *_ in con.execute(f"DESCRIBE {view}").fetchall()) == CLAIM_INDEX_COLUMNS
        asked = archive.claims(task="t-1")
        plan = con.execute(f"EXPLAIN ANALYZE {asked.rows.sql}", asked.rows.params).fetchall()[0][1]
        assert "Index Scan" in plan, plan
        assert sorted((row["task_id"], row["value"]) for row in asked) == [("t-1", 0.35), ("t-1", 0.75)]
    exact(db)


@pytest.mark.slow
def test_an_archive_of_schema_17_stores_its_index_by_task_when_it_is_upgraded(tmp_path):
    db = tmp_path / "old.duckdb"
    first_version_archive(str(db), str(SAMPLES), tmp_path, version=17)
    with Archive.open(str(db), read_only=True, upgrade=False) as archive:
        before = archive.con.execute("SELECT * FROM claim_index ORDER BY ALL").fetchall()
        assert archive.con.execute("SELECT count(*) FROM duckdb_indexes()").fetchone()[0] == 0
    upgraded = db_command(db, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert "applied 0018_claim_index_by_task" in upgraded.stdout
    with Archive.open(str(db), read_only=True) as archive:
        con = archive.con
        assert con.execute("SELECT index_name FROM duckdb_indexes()").fetchall() == [(CLAIM_INDEX_BY_TASK,)]
        assert con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'claim_index'").fetchone() == (
            "task_id",
        )
        columns = ", ".join(CLAIM_INDEX_COLUMNS)
        assert con.execute(f"SELECT {columns} FROM claim_index ORDER BY ALL").fetchall() == before
    assert exact(db) == len(before)
