"""`archiver db repair`: an archive torn by an earlier version (claims rows of commit groups replayed without
their records, copies, parts or `sources` rows) is told how to be repaired, is repaired, and re-ingesting
its files gives what a clean ingest gives. Repair on upgrade: tests/test_migrations.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.store.migrations import latest_version
from benchmarks.same_contents import differences
from tests.transcripts import SAMPLES

TORN = [
    str(SAMPLES / "verify-demo" / "rpc-v1.jsonl"),
    str(SAMPLES / "versant-insights" / "rpc-v1.jsonl"),
    str(SAMPLES / "kestrel-mobility" / "rpc-v1.jsonl"),
]
"""Sample files whose commit groups the SIGKILL tore (each holds claims)."""


def tear(db: str, paths: list[str]) -> int:
    """Leave of `paths` only their claims rows, as the torn replay of the earlier round did; how many."""
    with duckdb.connect(db) as con:
        for table in ("sources", "records", "results", "parts", "citations", "agent_cards", "rpc_errors"):
            column = "path" if table == "sources" else "source_path"
            con.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))", [paths])
        return con.execute("SELECT count(*) FROM claims WHERE source_path IN (SELECT unnest(?::VARCHAR[]))",
                           [paths]).fetchone()[0]  # fmt: skip


def claims_per_file(db: str, paths: list[str]) -> dict[str, int]:
    with duckdb.connect(db, read_only=True) as con:
        return dict(
            con.execute(
                "SELECT source_path, count(*) FROM claims WHERE source_path IN (SELECT unnest(?::VARCHAR[])) "
                "GROUP BY ALL",
                [paths],
            ).fetchall()
        )


def db(*args: str):
    return CliRunner().invoke(main, ["db", *args])


@pytest.mark.slow
def test_a_torn_archive_is_told_to_repair_is_repaired_and_reingests_as_a_clean_one(tmp_path):
    clean, torn = str(tmp_path / "clean.duckdb"), str(tmp_path / "torn.duckdb")
    with Archive.open(clean) as archive:
        archive.ingest([str(SAMPLES)])
    shutil.copy(clean, torn)
    per_file = claims_per_file(clean, TORN)
    orphans = tear(torn, TORN)
    assert orphans == sum(per_file.values()) > 40

    checked = db("check", "--db", torn)
    assert checked.exit_code == 1
    hint = "(`archiver db repair` removes them: no committed ingest wrote them)"
    assert "problem: uncommitted-claims: 3 claims rows of file versions no committed ingest recorded: " in (
        checked.stderr
    )
    assert f"problem: claim-part: {orphans} claims whose Part is not indexed in the same copy: " in checked.stderr
    assert checked.stderr.count(hint) == 2

    before = str(tmp_path / "before.duckdb")
    shutil.copy(torn, before)
    dry = db("repair", "--dry-run", "--db", torn)
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines()[-1] == (
        f"would remove {orphans:,} index rows no committed ingest recorded (claims {orphans:,})"
    )
    assert differences(Path(before), Path(torn)) == []  # a dry run changes nothing
    assert db("check", "--db", torn).exit_code == 1

    repaired = db("repair", "--db", torn)
    assert repaired.exit_code == 0, repaired.output
    *lines, total, reindexed = repaired.stdout.splitlines()
    assert sorted(line.split(" (")[0] for line in lines) == [f"removed: {path}" for path in sorted(TORN)]
    assert {line.rsplit(": ", 1)[1] for line in lines} == {f"{n} claims rows" for n in per_file.values()}
    assert total == f"removed {orphans:,} index rows no committed ingest recorded (claims {orphans:,})"
    with Archive.open(torn, read_only=True) as archive:
        results = archive.con.execute("SELECT count(DISTINCT result_key) FROM results").fetchone()[0]
    assert reindexed == f"claim index and kept audit made again: {results:,} results"
    assert db("repair", "--db", torn).stdout == (
        "nothing to repair: every index row belongs to a committed ingest\n"
        f"claim index and kept audit made again: {results:,} results\n"
    )

    checked = db("check", "--db", torn)
    assert checked.exit_code == 0, checked.stderr
    assert checked.stderr.count("written by no committed ingest") == 3  # the healed lines, one per file
    with Archive.open(torn) as archive:
        archive.ingest([str(SAMPLES)])
    assert differences(Path(clean), Path(torn)) == ["healed: 3 rows only in the second archive"]


@pytest.mark.slow
def test_repair_names_the_parts_citations_and_claims_of_a_committed_version_whose_copy_is_gone(tmp_path):
    """Rows that name a committed version but hang on nothing indexed (what migration 0007 made of a torn
    replay in an archive kept from before the commit marker): removed, table by table."""
    path = str(tmp_path / "a.duckdb")
    with Archive.open(path) as archive:
        archive.ingest([TORN[0]])
        archive.con.execute("DELETE FROM results")
        counts = {
            t: archive.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("parts", "citations", "claims")
        }
        assert min(counts.values()) > 0
        assert sorted(p.check for p in archive.check()) == ["part-copy"]
        found = archive.repair()
        assert {item.table: item.rows for item in found} == counts
        assert archive.check() == []


@pytest.mark.slow
def test_repair_waits_for_another_writer_or_says_the_archive_is_busy(tmp_path):
    path = str(tmp_path / "a.duckdb")
    with Archive.open(path) as archive:
        archive.ingest([TORN[0]])
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print(1, flush=True); "
         "time.sleep(60)", path],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == b"1\n"
        busy = db("repair", "--wait", "0.3", "--db", path)
        assert busy.exit_code == 1
        assert f"{path}: the archive is busy: process {holder.pid} holds it" in busy.stderr
    finally:
        holder.kill()
        holder.wait()


def test_a_dry_run_on_an_older_schema_is_refused_in_one_line(tmp_path):
    path = str(tmp_path / "old.duckdb")
    with Archive.open(path, upgrade=False) as old:
        old.upgrade(upto=6)
    refused = db("repair", "--dry-run", "--db", path)
    assert refused.exit_code == 1
    assert (
        refused.stderr.strip()
        .splitlines()[-1]
        .endswith(
            f"{path}: the archive's schema is at version 6, older than this archiver's ({latest_version()}); "
            "`archiver db repair` without --dry-run upgrades it and repairs it"
        )
    )
    with Archive.open(path, upgrade=False) as old:
        assert old.version() == 6


@pytest.mark.lake
def test_on_a_lake_repair_is_refused_while_another_writer_holds_leases_then_repairs(tmp_path):
    from archiver.store.connection import ArchiveBusyError
    from archiver.store.leases import leases_for

    db, data = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}", str(tmp_path / "lake-data")
    with Archive.open(db, data_path=data) as archive:
        archive.ingest([TORN[0]])
        archive.con.execute("DELETE FROM parts")
        claims = archive.con.execute("SELECT count(*) FROM claims").fetchone()[0]
        writer = leases_for(archive.location)
        assert writer.take("/dumps/next.jsonl", "0" * 64) is None  # a live writer, ingesting
        with pytest.raises(ArchiveBusyError, match=r"another writer is ingesting \(1 files leased; /dumps/next.jsonl"):
            archive.repair()
        writer.release()
        writer.close()
        found = archive.repair()
        assert {item.table: sum(i.rows for i in found if i.table == item.table) for item in found} == {
            "citations": 5,
            "claims": claims,
        }
        assert archive.check() == []
