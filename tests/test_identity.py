"""Sources by content: the same evidence is counted once, and no ordinary operation drops what was stored.

A source version is its bytes. The same bytes at another path (a copy, a move, a symlink, another
mount) are a path alias and nothing else; a log that grows replaces its earlier version; a file
rewritten under the same name, and each run read from standard input, is a new version whose results
join the index beside the earlier ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from tests.transcripts import SAMPLES, jsonrpc_result, rows, v1_cited_parts, v1_task

ROOT = Path(__file__).resolve().parent.parent


def lines(*task_ids: str, cited: bool = True) -> bytes:
    parts = v1_cited_parts if cited else (lambda: [{"data": {"share": 0.5}}])
    return b"".join(orjson.dumps(jsonrpc_result({"task": v1_task(t, parts())})) + b"\n" for t in task_ids)


def task_ids(archive: Archive) -> list[str]:
    return [t for (t,) in rows(archive, "SELECT DISTINCT task_id FROM results ORDER BY 1")]


@pytest.mark.slow
def test_stdin_runs_are_each_their_own_source(tmp_path):
    db = str(tmp_path / "a.duckdb")
    sse = b"".join(
        b"data: " + orjson.dumps(jsonrpc_result({"task": v1_task(t, v1_cited_parts())})) + b"\n\n" for t in ("s1", "s2")
    )
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", "-", "--db", db], input=lines("j1", "j2")).exit_code == 0
    assert runner.invoke(main, ["ingest", "-", "--db", db], input=sse).exit_code == 0
    again = runner.invoke(main, ["ingest", "-", "--db", db, "--json"], input=lines("j1", "j2"))
    assert orjson.loads(again.stdout)["files_unchanged"] == 1
    with Archive.open(db, read_only=True) as archive:
        assert task_ids(archive) == ["j1", "j2", "s1", "s2"]
        assert archive.check() == []
    shown = runner.invoke(main, ["show", "j1", "--db", db])
    assert shown.exit_code == 0
    assert "j1" in shown.output


@pytest.mark.slow
def test_a_log_rewritten_under_its_name_keeps_the_earlier_versions_results(archive, write, tmp_path):
    path = write("rotating.jsonl", lines("old1", "old2", cited=False))
    archive.ingest([path])
    assert [f.rule for f in archive.audit().findings] == ["uncited-result", "uncited-result"]
    Path(path).write_bytes(lines("new1"))  # rewritten, not appended
    summary = archive.ingest([path])
    assert (summary.files, summary.files_unchanged, summary.records) == (1, 0, 1)
    assert task_ids(archive) == ["new1", "old1", "old2"]
    assert sorted(f.result_key for f in archive.audit().findings) == ["task:old1", "task:old2"]
    assert archive.stats()["claims"] == 4  # old1, old2: /share; new1: /share and /n
    assert archive.check() == []
    out = tmp_path / "out"
    made = {Path(m.path).name: Path(m.path).read_bytes() for m in archive.export(str(out), fmt="files")}
    lineage = rows(archive, "SELECT sha256 FROM sources ORDER BY ingested_at")[0][0]
    assert made == {
        "rotating.jsonl": lines("new1"),
        f"rotating@{lineage[:12]}.jsonl": lines("old1", "old2", cited=False),
    }


@pytest.mark.slow
def test_a_growing_log_still_replaces_its_earlier_version(archive, write):
    path = write("growing.jsonl", lines("g1"))
    archive.ingest([path])
    with open(path, "ab") as handle:
        handle.write(lines("g2"))
    grown = archive.ingest([path])
    assert (grown.records, grown.duplicates_skipped) == (2, 1)
    assert rows(archive, "SELECT count(DISTINCT lineage), count(*) FROM sources") == [(1, 2)]
    assert rows(archive, "SELECT count(*), count(DISTINCT source_sha256) FROM results") == [(2, 1)]
    assert archive.check() == []


@pytest.mark.slow
@pytest.mark.parametrize("rotated_name", ["app.log.1", "app.log-20261201", "app.log.old"])
def test_a_log_rotated_after_it_grew_continues_its_lineage(archive, write, tmp_path, rotated_name):
    """app.log ingested, then grown and renamed (logrotate) with a new app.log begun, then ingested again:
    the rotated file continues app.log's lineage, so the archive counts what a fresh ingest of the two files
    counts (the rotated file was a new lineage beside the old version: its first results counted twice)."""
    path = Path(write("app.log", lines("r1", "r2", cited=False)))
    archive.ingest([str(path)])
    with open(path, "ab") as handle:
        handle.write(lines("r3"))
    path.rename(path.with_name(rotated_name))
    path.write_bytes(lines("r4", cited=False))
    summary = archive.ingest([str(path.parent)])
    assert (summary.files, summary.records, summary.duplicates_skipped) == (2, 4, 0)
    with Archive.open(str(tmp_path / "fresh.duckdb")) as fresh:
        fresh.ingest([str(path.parent)])
        counts = ("results", "copies", "parts", "citations", "claims")
        assert {k: archive.stats()[k] for k in counts} == {k: fresh.stats()[k] for k in counts}
        assert sorted((f.rule, f.result_key, Path(f.source_path).name) for f in archive.audit().findings) == sorted(
            (f.rule, f.result_key, Path(f.source_path).name) for f in fresh.audit().findings
        )
    assert archive.check() == []
    again = archive.ingest([str(path.parent)])
    assert again.files_unchanged == 2
    out = tmp_path / "out"
    made = {Path(m.path).name: Path(m.path).read_bytes() for m in archive.export(str(out), fmt="files")}
    assert made == {
        "app.log": lines("r4", cited=False),
        rotated_name: lines("r1", "r2", cited=False) + lines("r3"),
        **{name: data for name, data in made.items() if name.startswith("app@")},
    }


@pytest.mark.slow
def test_a_file_beside_another_whose_bytes_it_does_not_begin_with_is_its_own_lineage(archive, write):
    """Only a file that begins with the bytes of a sibling's latest version continues it."""
    first = Path(write("app.log", lines("a1")))
    archive.ingest([str(first)])
    Path(write("app.log.1", lines("b1") + lines("a1"))).touch()
    archive.ingest([str(first.parent)])
    assert task_ids(archive) == ["a1", "b1"]
    assert archive.stats()["copies"] == 3  # a1 in both files, b1


@pytest.fixture
def samples_copy(tmp_path) -> Path:
    copy = tmp_path / "copied" / "samples"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("generate", "__pycache__"))
    return copy


@pytest.mark.slow
def test_the_same_bytes_at_other_paths_are_counted_once(tmp_path, samples_copy):
    db = str(tmp_path / "a.duckdb")
    linked = tmp_path / "linked"
    linked.symlink_to(samples_copy, target_is_directory=True)
    with Archive.open(db) as archive:
        first = archive.ingest([str(samples_copy)])
        stats, findings = archive.stats(), sorted(str(f) for f in archive.audit().findings)
        assert len(findings) > 0
        moved = tmp_path / "moved"
        shutil.copytree(samples_copy, moved)
        copied = archive.ingest([str(moved), str(linked)])
        assert copied.files_aliased == 2 * first.files
        assert copied.records == 2 * first.records
        assert copied.duplicates_skipped == copied.records
        after = archive.stats()
        assert sorted(str(f) for f in archive.audit().findings) == findings
        assert after["paths_aliased"] == 2 * first.files
        assert {k: v for k, v in after.items() if k != "paths_aliased"} == {
            k: v for k, v in stats.items() if k != "paths_aliased"
        }
        assert archive.check() == []
        again = archive.ingest([str(moved)])
        assert again.files_unchanged == first.files
        assert again.files_aliased == 0


@pytest.mark.slow
def test_the_same_bytes_listed_twice_in_one_run_are_stored_once(archive, write, tmp_path):
    path = write("a/log.jsonl", lines("t1"))
    twin = write("b/log.jsonl", lines("t1"))
    summary = archive.ingest([path, twin])
    assert (summary.files, summary.files_aliased) == (2, 1)
    assert rows(archive, "SELECT path, alias_of FROM sources ORDER BY path") == [(path, None), (twin, path)]
    assert archive.stats()["copies"] == 1


@pytest.mark.slow
def test_the_cli_says_how_many_paths_held_stored_bytes(tmp_path, write):
    path = write("a/log.jsonl", lines("t1"))
    twin = write("b/log.jsonl", lines("t1"))
    result = CliRunner().invoke(main, ["ingest", path, twin, "--db", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("files 2 (0 unchanged, 1 the same bytes as a stored file)")


# --- one commit group lands whole or not at all --------------------------------------------------------------

STEPS = ("records", "index", "sources", "commit")


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dumps")
    for i in range(6):
        (folder / f"log{i}.jsonl").write_bytes(lines(*(f"f{i}-t{j}" for j in range(50))))
    return folder


def ingest_process(db: str, folder: Path, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "ARCHIVER_KILL_AT": kill_at or ""}
    return subprocess.run(
        [sys.executable, "-m", "archiver", "ingest", str(folder), "--db", db],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_inside_each_write_step_leaves_a_consistent_archive(tmp_path, dumps, step):
    whole = str(tmp_path / "whole.duckdb")
    assert ingest_process(whole, dumps).returncode == 0
    db = str(tmp_path / "killed.duckdb")
    killed = ingest_process(db, dumps, kill_at=step)
    assert killed.returncode == -9, killed.stderr
    with Archive.open(db) as archive:  # heals whatever a replay left of the killed commit
        assert archive.check() == []
        committed = archive.stats()["sources"]
    assert committed == (6 if step == "commit" else 0)
    assert ingest_process(db, dumps).returncode == 0
    checked = subprocess.run(
        [sys.executable, "-m", "archiver", "db", "check", "--db", db],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    with Archive.open(whole, read_only=True) as expected, Archive.open(db, read_only=True) as got:
        assert got.stats() == expected.stats()


REPLAY = """
import os, signal, sys
from archiver.archive import Archive
with Archive.open(sys.argv[1]) as archive:
    archive.con.execute("INSERT INTO claims SELECT * REPLACE ('f' || right(source_sha256, 63) AS source_sha256) "
                        "FROM claims")
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_rows_of_an_uncommitted_version_are_healed_and_reported(tmp_path, write):
    """What a storage engine that replays a killed transaction's large appends leaves: claims rows of a
    version whose `sources` row never committed, in a WAL that the next open replays. That open removes
    them and says so (here the rows are made by a committed INSERT in a process killed before it closed)."""
    db = str(tmp_path / "a.duckdb")
    path = write("log.jsonl", lines("t1", "t2"))
    with Archive.open(db) as archive:
        archive.ingest([path])
        before = archive.stats()
    replay = subprocess.run([sys.executable, "-c", REPLAY, db], cwd=ROOT, capture_output=True, check=False)
    assert replay.returncode == -9, replay.stderr
    assert os.path.exists(db + ".wal"), replay.stderr
    with Archive.open(db, read_only=True) as archive:  # a read-only open heals first, too
        assert archive.stats() == {**before, "healed_rows": before["claims"]}
        assert archive.check() == []
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 0
    assert f"removed {before['claims']} claims rows of {path}" in checked.stderr
    assert "written by no committed ingest" in checked.stderr
    counted = CliRunner().invoke(main, ["stats", "--json", "--db", db])
    assert orjson.loads(counted.stdout)["healed_rows"] == before["claims"]


@pytest.mark.slow
def test_db_check_finds_rows_of_uncommitted_versions(tmp_path, write):
    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([write("log.jsonl", lines("t1", "t2"))])
        archive.con.execute(
            "INSERT INTO claims SELECT * REPLACE ('f' || right(source_sha256, 63) AS source_sha256) FROM claims"
        )
        # rows written behind the writer's back: the kept claim index and counts no longer equal their definitions
        found = sorted(p.check for p in archive.check())
        assert found == ["claim-index", "duplicate-claim", "kept-counts", "uncommitted-claims"]


@pytest.mark.slow
def test_the_audit_of_a_copied_folder_finds_what_its_files_hold(tmp_path, samples_copy):
    moved = tmp_path / "moved"
    shutil.copytree(samples_copy, moved)
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        archive.ingest([str(samples_copy)])
        archive.ingest([str(moved)])
        original = sorted((f.rule, f.result_key) for f in archive.audit(source=str(samples_copy)).findings)
        assert original
        assert sorted((f.rule, f.result_key) for f in archive.audit(source=str(moved)).findings) == original
        assert sorted((f.rule, f.result_key) for f in archive.audit().findings) == original


@pytest.mark.slow
def test_a_log_seen_at_two_mounts_is_counted_once_as_it_grows(archive, write):
    """One log on a share mounted at two paths: the second path is an alias while the bytes agree, and
    when it is read grown first, its new version takes over the aliased version's results."""
    mount_a = write("mnt-a/app.log.jsonl", lines("t1"))
    mount_b = write("mnt-b/app.log.jsonl", lines("t1"))
    archive.ingest([mount_a])
    assert archive.ingest([mount_b]).files_aliased == 1
    for path in (mount_b, mount_a):  # the log grows; the writer of mount b sees it first
        with open(path, "ab") as handle:
            handle.write(lines("t2"))
    archive.ingest([mount_b])
    assert archive.ingest([mount_a]).files_aliased == 1
    assert task_ids(archive) == ["t1", "t2"]
    assert archive.stats()["copies"] == 2
    assert archive.check() == []
