"""The benchmark's own machinery: archives scaled up and down keep every table of stored copies consistent
(a kept index included, whatever its name), a command past its bound is stopped, and a rerun of some rows
re-measures them in their section of RESULTS.md."""

from __future__ import annotations

import argparse
import shutil
import sys
import time

import duckdb
import pytest

from archiver.archive import Archive
from benchmarks.common import Bound, BoundExceededError, timed
from benchmarks.run import _merge, chosen_rows
from benchmarks.scale import keyed_tables, scale_archive
from tests.test_audit_kept import audit_exact
from tests.test_counts_kept import counts_exact

KEPT = "kept_claims"  # a table the ingest would keep: the view's rows, keyed like the stored copies


@pytest.fixture(scope="module")
def indexed(samples_archive, tmp_path_factory):
    """The samples' archive with a kept index of the claims counted once, written as a table."""
    db = tmp_path_factory.mktemp("indexed") / "archive.duckdb"
    shutil.copyfile(samples_archive, db)
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE TABLE {KEPT} AS SELECT * FROM claim_citations")
    return db


def kept_equals_view(db) -> tuple[int, int, int]:
    """Rows of the kept table, of the view, and of their symmetric difference (as multisets)."""
    with duckdb.connect(str(db), read_only=True) as con:
        kept = con.execute(f"SELECT count(*) FROM {KEPT}").fetchone()[0]
        view = con.execute("SELECT count(*) FROM claim_citations").fetchone()[0]
        apart = con.execute(
            f"""SELECT count(*) FROM ((FROM {KEPT} EXCEPT ALL FROM claim_citations)
                UNION ALL (FROM claim_citations EXCEPT ALL FROM {KEPT}))"""
        ).fetchone()[0]
    return kept, view, apart


def test_a_kept_index_is_found_by_its_key_columns(indexed):
    with duckdb.connect(str(indexed), read_only=True) as con:
        keyed = keyed_tables(con)
    assert {"results", "parts", "citations", "claims", KEPT} <= set(keyed)
    assert not {"records", "sources", "agent_cards", "schema_migrations"} & set(keyed)
    assert keyed[KEPT][:3] == ["value", "literal", "unit"]


def test_scaled_up_the_kept_index_is_replicated_with_the_stored_copies(indexed, tmp_path):
    with duckdb.connect(str(indexed), read_only=True) as con:
        have = con.execute("SELECT count(*) FROM claims").fetchone()[0]
        tasks = con.execute("SELECT count(DISTINCT task_id) FROM results").fetchone()[0]
    target = tmp_path / "up.duckdb"
    total = scale_archive(indexed, target, 3 * have)
    assert total == 3 * have
    kept, view, apart = kept_equals_view(target)
    assert kept == view > 0
    assert apart == 0
    with duckdb.connect(str(target), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT task_id) FROM results").fetchone()[0] == 3 * tasks
        assert con.execute(f"SELECT count(*) FROM {KEPT} WHERE result_key LIKE '%~2'").fetchone()[0] == view // 3


def test_scaled_down_the_kept_index_keeps_the_rows_of_the_results_kept(indexed, tmp_path):
    with duckdb.connect(str(indexed), read_only=True) as con:
        have = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    target = tmp_path / "down.duckdb"
    total = scale_archive(indexed, target, have // 3)
    assert 0 < total < have
    kept, view, apart = kept_equals_view(target)
    assert 0 < kept < have
    assert (kept, apart) == (view, 0)


@pytest.mark.parametrize("times", [3, 1 / 3], ids=["up", "down"])
def test_a_scaled_archive_s_kept_audit_and_counts_are_their_definitions(samples_archive, tmp_path, times):
    """A kept finding is a sentence naming its task: a replica's copied row would name the original's, so the
    scaled archive's kept audit is made again from its definition (`scale._audit_again`)."""
    with duckdb.connect(str(samples_archive), read_only=True) as con:
        have = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    target = tmp_path / "scaled.duckdb"
    scale_archive(samples_archive, target, int(have * times))
    with Archive.open(str(target), read_only=True) as archive:
        assert audit_exact(archive.con) > 0
        assert counts_exact(archive.con)["claims"] == archive.con.execute("SELECT count(*) FROM claims").fetchone()[0]
        if times > 1:
            replica = "SELECT count(*) FROM audit_findings_kept WHERE detail LIKE '%~2%' AND task_id LIKE '%~2'"
            assert archive.con.execute(replica).fetchone()[0] > 0


def test_integer_keys_are_shifted_alike_in_every_table(tmp_path):
    source = tmp_path / "integers.duckdb"
    with duckdb.connect(str(source)) as con:
        con.execute("CREATE TABLE results (result_key BIGINT, copy_id INTEGER, task_id VARCHAR)")
        con.execute("INSERT INTO results VALUES (1, 10, 't1'), (7, 70, 't7')")
        con.execute("CREATE TABLE claims (part_id BIGINT, copy_id INTEGER, value DOUBLE)")
        con.execute("INSERT INTO claims VALUES (100, 10, 1.5), (101, 10, 2.5), (700, 70, 3.5)")
        con.execute("CREATE TABLE findings (result_key BIGINT, rule VARCHAR)")
        con.execute("INSERT INTO findings VALUES (7, 'uncited-result')")
    target = tmp_path / "scaled.duckdb"
    assert scale_archive(source, target, 9) == 9
    with duckdb.connect(str(target), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT copy_id), count(DISTINCT task_id) FROM results").fetchone() == (6, 6)
        joined = "SELECT count(*) FROM claims JOIN results USING (copy_id)"
        assert con.execute(joined).fetchone()[0] == 9
        found = "SELECT task_id FROM findings JOIN results USING (result_key) ORDER BY 1"
        assert [r[0] for r in con.execute(found).fetchall()] == ["t7", "t7~1", "t7~2"]


def test_a_command_past_its_time_is_stopped_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    code = (
        "import pathlib, subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid)); time.sleep(60)"
    )
    with pytest.raises(BoundExceededError, match=r"^> 1 s, killed"):
        timed([sys.executable, "-c", code], bound=Bound(seconds=1))
    child = int(pid_file.read_text())
    for _ in range(50):  # reaped by init once killed
        if _state(child) in ("gone", "Z"):
            break
        time.sleep(0.1)
    assert _state(child) in ("gone", "Z")


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_command_past_its_memory_is_stopped():
    code = "import time; block = bytearray(300 * 2**20); block[::4096] = b'x' * len(block[::4096]); time.sleep(60)"
    with pytest.raises(BoundExceededError, match=r"^> 0 GiB RSS after \d+ s, killed"):
        timed([sys.executable, "-c", code], bound=Bound(seconds=60, rss=100 * 2**20))


def test_a_command_within_its_bound_answers():
    _, peak, out = timed([sys.executable, "-c", "print('answer')"], bound=Bound(seconds=60))
    assert out == "answer\n"
    assert peak > 0


def test_rows_are_chosen_by_name():
    assert chosen_rows("task, count") == ("task", "count")
    assert "serve" in chosen_rows("all")
    with pytest.raises(argparse.ArgumentTypeError, match="unknown rows tsak"):
        chosen_rows("tsak")


def section(command: str, rows: list[tuple[str, str]]) -> str:
    lines = [f"`{command}` on 2 cores", "", "| measure | archiver | reference / target |", "|---|---|---|"]
    return "\n".join(lines + [f"| {measure} | {value} | t |" for measure, value in rows])


def test_a_rerun_of_some_rows_replaces_them_in_their_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    first = section("benchmarks/run", [("count (10.0M claims)", "29 s"), ("audit (10.0M claims)", "> 600 s")])
    note = "\n\nMeasured under load.\n"
    results.write_text(_merge(results, "tasks 20,000, 2026-12-06", first + note) + "\n## What bounds it\n\nprose\n")
    again = section(
        "benchmarks/run --rows audit", [("audit (10.0M claims)", "12 s"), ("audit (100.0M claims)", "99 s")]
    )
    merged = _merge(results, "tasks 20,000, 2026-12-06", again)
    body = merged.split("\n## tasks 20,000, 2026-12-06\n")[1]
    assert body.index("`benchmarks/run` on") < body.index("`benchmarks/run --rows audit` on")
    rows = [line for line in body.splitlines() if line.startswith("| ") and "claims" in line]
    assert rows == [
        "| count (10.0M claims) | 29 s | t |",
        "| audit (10.0M claims) | 12 s | t |",
        "| audit (100.0M claims) | 99 s | t |",
    ]
    assert "| audit (100.0M claims) | 99 s | t |\n\nMeasured under load.\n" in body
    assert merged.endswith("## What bounds it\n\nprose\n")
    other_day = _merge(results, "tasks 20,000, 2026-12-07", again)
    assert "| audit (10.0M claims) | > 600 s | t |" in other_day
