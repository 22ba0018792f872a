"""The archive on DuckLake: every command, migrations, concurrent writers and the copy round trip.

Catalogs: SQLite and a DuckDB file always; PostgreSQL when Debian's `postgresql` package is installed
(a throwaway cluster on a free loopback port, started here and stopped by its pid).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.store.backend import locate
from tests import servers
from tests.stored import WHOLE_RECORDS
from tests.transcripts import SAMPLES, assert_offline_and_locked, jsonrpc_result, v1_cited_parts, v1_task

pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed: pip install '.[lake]'")

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.lake


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster on 127.0.0.1; yields a function making a fresh database's DSN."""
    servers.skip_without("postgres")
    made = []
    with servers.postgres() as server:

        def database() -> str:
            name = f"lake{len(made)}"
            server.createdb(name)
            made.append(name)
            return f"dbname={name} host=127.0.0.1 port={server.port} user=postgres"

        yield database


@pytest.fixture(autouse=True)
def _extensions(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path_factory.getbasetemp() / "duckdb-extensions"))
    monkeypatch.delenv("ARCHIVER_DB", raising=False)
    monkeypatch.delenv("ARCHIVER_DATA_PATH", raising=False)


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def lake(request, tmp_path) -> tuple[str, str]:
    """(--db, --data-path) of a new lake with each kind of catalog."""
    data = str(tmp_path / "lake-data")
    if request.param == "sqlite":
        return f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}", data
    if request.param == "duckdb":
        return f"ducklake:{tmp_path / 'catalog.ducklake'}", data
    return f"ducklake:postgres:{request.getfixturevalue('postgres')()}", data


@pytest.fixture(params=["sqlite", "postgres"])
def shared_lake(request, tmp_path) -> tuple[str, str]:
    """A lake whose catalog admits several writers."""
    if request.param == "sqlite":
        return f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}", str(tmp_path / "lake-data")
    return f"ducklake:postgres:{request.getfixturevalue('postgres')()}", str(tmp_path / "lake-data")


def run(*args: str, code: int | None = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if code is not None:
        assert result.exit_code == code, result.output
    return result.output


def stored(db: str) -> tuple[dict, list[tuple]]:
    """Stats and every (record sha256, raw bytes, source, locator) of an archive."""
    with Archive.open(db, read_only=True) as archive:
        records = archive.con.execute(
            f"SELECT sha256, raw, source_path, locator FROM {WHOLE_RECORDS} AS r ORDER BY source_path, seq"
        ).fetchall()
        return archive.stats(), records


def test_locations_are_parsed_in_one_place(tmp_path):
    assert locate(str(tmp_path / "a.duckdb")).catalog == "file"
    pg = locate("ducklake:postgres:dbname=x host=127.0.0.1", "s3://bucket/lake")
    assert (pg.catalog, pg.catalog_path, pg.data_path) == ("postgres", "dbname=x host=127.0.0.1", "s3://bucket/lake")
    sqlite = locate(f"ducklake:sqlite:{tmp_path}/c.sqlite")
    assert (sqlite.catalog, sqlite.data_path) == ("sqlite", f"{tmp_path}/c.sqlite.files/")
    assert locate("ducklake:x.ducklake").catalog == "duckdb"
    assert locate("ducklake:x.ducklake").catalog_path.startswith("/")


def test_every_command_on_a_lake(lake, tmp_path):
    db, data = lake
    opts = ["--db", db, "--data-path", data]
    out = run("ingest", str(SAMPLES), *opts, "--json")
    summary = json.loads(out)
    assert summary["quarantined"] == 0
    assert summary["claimed_elsewhere"] == []
    run("ingest", str(SAMPLES), *opts)  # again: nothing new
    file_db = str(tmp_path / "single.duckdb")
    run("ingest", str(SAMPLES), "--db", file_db)
    lake_stats, lake_records = stored(db)
    file_stats, file_records = stored(file_db)
    assert lake_stats == file_stats
    assert lake_records == file_records

    assert run("db", "current", "--db", db).strip() == run("db", "current", "--db", file_db).strip()
    assert "at version" in run("db", "upgrade", "--db", db)
    for command in (["query", "claims"], ["query", "citations"], ["query", "impact"]):
        assert run(*command, "--db", db, "--format", "jsonl") == run(*command, "--db", file_db, "--format", "jsonl")
    assert run("audit", "--db", db, "--format", "json", code=None) == run(
        "audit", "--db", file_db, "--format", "json", code=None
    )
    task = json.loads(
        run(
            "sql",
            "SELECT task_id FROM results WHERE task_id IS NOT NULL ORDER BY 1 LIMIT 1",
            "--db",
            db,
            "--format",
            "jsonl",
        )
    )["task_id"]
    assert run("show", task, "--db", db) == run("show", task, "--db", file_db)
    assert run("export", "--raw", "--db", db) == run("export", "--raw", "--db", file_db)
    run("export", "--format", "parquet", str(tmp_path / "pq"), "--db", db)
    assert (tmp_path / "pq" / "claims.parquet").exists()
    assert run("stats", "--db", db, "--json") == run("stats", "--db", file_db, "--json")
    refused = run("sql", "DELETE FROM records", "--db", db, code=2)
    assert "read-only SELECT" in refused


def test_migrations_are_recorded_in_the_lake(lake):
    db, data = lake
    with Archive.open(db, data_path=data) as archive:
        assert archive.version() == max(
            m.version for m in __import__("archiver.store.migrations", fromlist=["available"]).available()
        )
        tables = {
            name
            for (name,) in archive.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
            ).fetchall()
        }
        assert {"schema_migrations", "records", "claim_citations"} <= tables
        assert (
            archive.con.execute(
                "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
            ).fetchone()[0]
            == "ducklake"
        )


def test_a_missing_lake_is_reported_not_created(tmp_path):
    out = run("stats", "--db", f"ducklake:sqlite:{tmp_path / 'none.sqlite'}", code=1)
    assert "no archive here" in out
    assert not (tmp_path / "none.sqlite").exists()


def test_a_duckdb_file_catalog_admits_one_process_and_says_so(tmp_path):
    db = f"ducklake:{tmp_path / 'one.ducklake'}"
    Archive.open(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nfrom archiver.archive import Archive\n"
                f"a = Archive.open({db!r})\nprint('open', flush=True)\ntime.sleep(30)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        out = run("stats", "--db", db, "--wait", "0.5", code=1)
        assert f"process {holder.pid}" in out
        assert "one process at a time" in out
        assert "ducklake:postgres" in out
    finally:
        holder.kill()
        holder.wait()


def test_missing_wheels_name_the_extra(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("duckdb_extension_") else real(name, *a)
    )
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path / "empty-extension-dir"))
    out = run("ingest", str(SAMPLES), "--db", f"ducklake:sqlite:{tmp_path / 'c.sqlite'}", code=1)
    assert "pip install 'a2a-archiver[lake]'" in out


def _corpus(root: Path, folders: int = 6, files: int = 6) -> list[Path]:
    """Folders of distinct transcripts (each file its own tasks), with an agent card each."""
    made = []
    for f in range(folders):
        folder = root / f"batch{f}"
        folder.mkdir(parents=True)
        card = json.loads((SAMPLES / "versant-insights" / "agent-card.json").read_text())
        (folder / "agent-card.json").write_text(json.dumps({**card, "name": f"Agent {f}"}))
        for n in range(files):
            lines = [
                json.dumps(
                    jsonrpc_result(
                        {"task": v1_task(f"t-{f}-{n}-{k}", v1_cited_parts({"share": 0.1 * k, "n": 100 + k}))}, rpc_id=k
                    )
                )
                for k in range(20)
            ]
            (folder / f"log{n}.jsonl").write_text("\n".join(lines) + "\n")
        made.append(folder)
    return made


def _writer(db: str, data: str, paths: list[Path]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "archiver",
            "ingest",
            *map(str, paths),
            "--db",
            db,
            "--data-path",
            data,
            "--json",
            "--wait",
            "60",
            "--wait-for-writers",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=os.environ.copy(),
    )


def test_concurrent_writers_store_each_file_once(shared_lake, tmp_path):
    db, data = shared_lake
    batches = _corpus(tmp_path / "in")
    Archive.open(db, data_path=data).close()
    plans = [batches[0:4], batches[2:6], [batches[5], batches[1], batches[3], batches[0]]]
    started = time.monotonic()
    writers = [_writer(db, data, plan) for plan in plans]
    outputs = [w.communicate(timeout=300) for w in writers]
    elapsed = time.monotonic() - started
    for writer, (_out, err) in zip(writers, outputs, strict=False):
        assert writer.returncode == 0, err
    summaries = [json.loads(out) for out, _err in outputs]
    files = sum(len(plan) for plan in plans) * 7
    # A writer stores a file unless another holds its lease, or committed it before this one reached it
    # (a writer that starts late finds it unchanged).
    stored_files = sum(s["files"] - len(s["claimed_elsewhere"]) - s["files_unchanged"] for s in summaries)
    assert sum(s["files"] for s in summaries) == files
    assert stored_files == 6 * 7, summaries  # each file by exactly one writer
    single = str(tmp_path / "single.duckdb")
    run("ingest", *map(str, batches), "--db", single)
    lake_stats, lake_records = stored(db)
    single_stats, single_records = stored(single)
    assert lake_stats == single_stats
    assert lake_records == single_records
    with Archive.open(db, read_only=True) as archive:
        assert archive.con.execute("SELECT count(*) - count(DISTINCT (path, sha256)) FROM sources").fetchone()[0] == 0
        assert archive.con.execute("SELECT count(*) - count(DISTINCT record_id) FROM records").fetchone()[0] == 0
    print(
        f"\n3 writers, {files} listed files, {stored_files} stored in {elapsed:.1f}s; "
        f"commit retries {[s['commit_retries'] for s in summaries]}"
    )


def test_a_lease_of_a_live_writer_is_taken_over_after_the_lease(shared_lake, tmp_path, monkeypatch):
    from archiver.store.leases import leases_for

    db, data = shared_lake
    path = tmp_path / "in" / "one.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(jsonrpc_result({"task": v1_task("t-dead", v1_cited_parts())})) + "\n")
    sha = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    with Archive.open(db, data_path=data) as archive:
        silent = leases_for(archive.location)
        assert silent.take(str(path), sha) is None  # a writer that leases, then hangs (its process lives on)
        live = leases_for(archive.location)
        holder = live.take(str(path), sha)
        assert holder is not None
        assert holder.writer == silent.writer
        assert not holder.committed
        summary = archive.ingest([str(path)])
        assert summary.claimed_elsewhere
        assert summary.records == 0
        assert len(summary.not_stored) == 1
        assert summary.not_stored[0].startswith(f"{path}: being ingested by writer {silent.writer} (leased ")
        monkeypatch.setenv("ARCHIVER_LEASE_SECONDS", "0")
        summary = archive.ingest([str(path)])
        assert summary.claimed_elsewhere == []
        assert summary.records == 1
        assert summary.leases_taken_over
        assert silent.writer in summary.leases_taken_over[0]
        assert not silent.confirm(sha)  # the silent writer, were it only slow, would now drop the file
        assert archive.stats()["sources"] == 1


def test_transfer_round_trip_file_lake_file(lake, tmp_path):
    db, data = lake
    first = str(tmp_path / "first.duckdb")
    run("ingest", str(SAMPLES), "--db", first)
    out = run("db", "transfer", "--db", first, "--to", db, "--to-data-path", data)
    assert "transferred into" in out
    back = str(tmp_path / "back.duckdb")
    run("db", "transfer", "--db", db, "--to", back)
    first_stats, first_records = stored(first)
    for other in (db, back):
        stats, records = stored(other)
        assert stats == first_stats
        assert records == first_records
        assert {sha for sha, *_ in records} == {sha for sha, *_ in first_records}
    # a second transfer into a non-empty archive is refused, naming what it holds (the command's earlier
    # name, `db copy`, still works)
    held = first_stats["sources"]
    refused = run("db", "copy", "--db", first, "--to", back, code=1)
    assert f"the target holds {held} source file versions already; transfer into a new archive" in refused
    # and the lake goes on ingesting: nothing is new
    summary = json.loads(run("ingest", str(SAMPLES), "--db", db, "--json"))
    assert summary["files_unchanged"] == summary["files"]


def test_walk_through_from_one_file_to_a_postgres_lake(postgres, tmp_path, monkeypatch):
    """The commands of the README's "When one machine is not enough", in order."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLES, tmp_path / "sample_transcripts")
    dsn = postgres()
    lake = f"ducklake:postgres:{dsn}"
    run("ingest", "sample_transcripts/")  # 1. one file, as today
    out = run("db", "transfer", "--to", lake, "--to-data-path", "lake-data/")  # 2. move it into a lake
    assert "transferred into" in out
    monkeypatch.setenv("ARCHIVER_DB", lake)  # 3. point every command at it
    assert json.loads(run("stats", "--json"))["sources"] == stored("archive.duckdb")[0]["sources"]
    writers = [_writer(lake, "lake-data/", [tmp_path / "sample_transcripts"]) for _ in range(2)]  # 4. many writers
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert json.loads(out)["files_unchanged"] == json.loads(out)["files"]
    assert run("query", "claims", "--study", "Versant*", "--format", "jsonl")  # 5. every command, unchanged
    run("export", "--format", "parquet", "parquet-out/")  # 6. for engines without DuckLake
    assert (tmp_path / "parquet-out" / "claim_citations").is_dir()
    assert list((tmp_path / "lake-data").rglob("*.parquet"))  # the lake's own Parquet files


def test_lake_connections_are_offline_and_locked(lake):
    """DuckLake and its catalog's scanner load while the lake opens; then no extension loads by itself."""
    db, data = lake
    with Archive.open(db, data_path=data) as archive:
        assert_offline_and_locked(archive.con)


# --- leases of dead writers, interrupted lake ingests, check and cleanup ------------------------------------


def _one_file(tmp_path: Path, name: str = "one.jsonl", task: str = "t-lease") -> tuple[Path, str]:
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(jsonrpc_result({"task": v1_task(task, v1_cited_parts())})) + "\n")
    return path, __import__("hashlib").sha256(path.read_bytes()).hexdigest()


def _holder(db: str, data: str, path: Path, sha: str, seconds: float) -> subprocess.Popen:
    """Another writer process that leases `path` and holds it for `seconds`, then ends without releasing it
    (as a killed writer would)."""
    code = (
        "import os, sys, time\nfrom archiver.archive import Archive\nfrom archiver.store.leases import leases_for\n"
        f"a = Archive.open({db!r}, data_path={data!r})\nleases = leases_for(a.location)\n"
        f"assert leases.take({str(path)!r}, {sha!r}) is None\nprint('held', flush=True)\n"
        f"time.sleep({seconds})\nos._exit(0)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=os.environ.copy()
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def _leases(db: str, data: str | None = None):
    from archiver.store.leases import leases_for

    archive = Archive.open(db, data_path=data)
    return archive, leases_for(archive.location)


def test_a_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(shared_lake, tmp_path):
    db, data = shared_lake
    path, sha = _one_file(tmp_path)
    holder = _holder(db, data, path, sha, 0)
    holder.wait(timeout=60)
    with Archive.open(db, data_path=data) as archive:
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert summary.not_stored == []
    assert summary.claimed_elsewhere == []
    assert len(summary.leases_taken_over) == 1
    assert "whose process has ended" in summary.leases_taken_over[0]
    assert f":{holder.pid}:" in summary.leases_taken_over[0]


def test_a_reused_pid_is_not_taken_for_the_writer_that_held_the_lease(shared_lake, tmp_path):
    db, data = shared_lake
    path, sha = _one_file(tmp_path)
    archive, earlier = _leases(db, data)
    with archive:
        earlier.started = "another-boot:1"  # a writer that had this very pid before it was reused (by us)
        assert earlier.take(str(path), sha) is None
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert "whose process has ended" in summary.leases_taken_over[0]


def test_a_lease_of_another_host_waits_for_the_lease_even_if_its_pid_is_free_here(shared_lake, tmp_path, monkeypatch):
    db, data = shared_lake
    path, sha = _one_file(tmp_path)
    archive, remote = _leases(db, data)
    with archive:
        remote.host, remote.pid = "another-host", 4_000_000  # no such pid here: it names a process over there
        assert remote.take(str(path), sha) is None
        summary = archive.ingest([str(path)])
        assert summary.records == 0
        assert len(summary.not_stored) == 1
        monkeypatch.setenv("ARCHIVER_LEASE_SECONDS", "0")
        summary = archive.ingest([str(path)])
    assert summary.records == 1
    assert "silent for" in summary.leases_taken_over[0]


def test_leases_are_keyed_on_content_not_path(shared_lake, tmp_path):
    db, data = shared_lake
    first, sha = _one_file(tmp_path, "mount-a.jsonl")
    second, same = _one_file(tmp_path, "mount-b.jsonl")
    assert sha == same
    archive, one = _leases(db, data)
    with archive:
        assert one.take(str(first), sha) is None
        other = _leases(db, data)[1]
        holder = other.take(str(second), sha)
        assert holder is not None
        assert holder.writer == one.writer
        assert holder.path == str(first)


def test_files_held_by_a_live_writer_fail_the_run_unless_it_waits_for_writers(shared_lake, tmp_path):
    db, data = shared_lake
    path, sha = _one_file(tmp_path)
    holder = _holder(db, data, path, sha, 8)
    try:
        result = CliRunner().invoke(main, ["ingest", str(path), "--db", db])
        assert result.exit_code == 1, result.output
        assert f"not stored: {path}: being ingested by writer " in result.output
        assert "use --wait-for-writers" in result.output
        waited = CliRunner().invoke(main, ["ingest", str(path), "--db", db, "--wait-for-writers", "--json"])
        assert waited.exit_code == 0, waited.output
        assert holder.poll() is not None  # it waited for the holder to die, then took the file over
    finally:
        holder.kill()
        holder.wait()
    summary = json.loads(waited.stdout)
    assert summary["records"] == 1
    assert summary["not_stored"] == []
    assert len(summary["leases_taken_over"]) == 1


def _lake_ingest(db: str, data: str, paths: list[Path]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            (  # one file per chunk and per commit group, so a kill lands between commits
                "import archiver.ingest.run as r, archiver.ingest.pipeline as p; r.GROUP_RECORDS = p.CHUNK_FILES = 1; "
                "from archiver.cli import main; main(prog_name='archiver')"
            ),
            "ingest",
            *map(str, paths),
            "--db",
            db,
            "--data-path",
            data,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        start_new_session=True,
    )


def _catalog_leases(db: str):
    """The lake's leases read without opening the lake (whose SQLite catalog a reader would hold locked)."""
    from archiver.store.leases import leases_for

    return leases_for(locate(db))


def _wait_for_commits(db: str, process: subprocess.Popen, count: int) -> None:
    leases = _catalog_leases(db)
    deadline = time.monotonic() + 120
    while len(leases.runner.query("SELECT sha256 FROM archiver_leases WHERE committed_at IS NOT NULL")) < count:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, process.communicate()[1]
        time.sleep(0.02)
    leases.close()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_rerun_after_a_stopped_lake_ingest_stores_every_file(shared_lake, tmp_path, signum):
    db, data = shared_lake
    batches = _corpus(tmp_path / "in")
    Archive.open(db, data_path=data).close()
    first = _lake_ingest(db, data, batches)
    _wait_for_commits(db, first, 1)
    first.send_signal(signum)
    _out, err = first.communicate(timeout=60)
    assert first.returncode == (-signum if signum == signal.SIGKILL else 143), err
    leases = _catalog_leases(db)
    held = leases.held()
    leases.close()
    if signum == signal.SIGTERM:
        assert held == [], "an ingest stopped by SIGTERM releases its leases"
        assert err.startswith("interrupted by SIGTERM: committed "), err
        assert err.count("\n") == 1, err
    rerun = CliRunner().invoke(main, ["ingest", *map(str, batches), "--db", db, "--json"])
    assert rerun.exit_code == 0, rerun.output
    summary = json.loads(rerun.stdout)
    assert summary["not_stored"] == []
    assert summary["claimed_elsewhere"] == []
    assert stored(db)[0]["sources"] == 6 * 7
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    if checked.exit_code and signum == signal.SIGKILL:  # a commit killed halfway leaves its Parquet files only
        assert all(
            line.startswith(("problem: orphan-file: ", "1 integrity problems")) for line in checked.output.splitlines()
        ), checked.output
        run("db", "cleanup", "--db", db)
        checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 0, checked.output


def test_leases_a_writer_left_held_after_its_commit_are_settled_by_the_next_run(shared_lake, tmp_path):
    """A writer stopped between its commit and marking its leases (it marks them after the commit, file by
    file) leaves leases held on contents the lake holds: the next run over those files marks them
    committed, so `db check` finds nothing, and a later writer of the same bytes makes an alias."""
    db, data = shared_lake
    path, sha = _one_file(tmp_path)
    run("ingest", str(path), "--db", db, "--data-path", data)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leases = _catalog_leases(db)  # the lease as that writer left it: its own, not yet marked committed
    leases.runner.execute(
        f"UPDATE archiver_leases SET writer = 'gone', pid = {int(ended.stdout)}, committed_at = NULL "
        f"WHERE sha256 = '{sha}'"
    )
    assert [holder.sha256 for holder in leases.held()] == [sha]
    leases.close()
    assert (
        "problem: held-lease: 1 file leases not committed"
        in CliRunner().invoke(main, ["db", "check", "--db", db]).output
    )
    again = json.loads(run("ingest", str(path), "--db", db, "--data-path", data, "--json"))
    assert again["files_unchanged"] == 1
    leases = _catalog_leases(db)
    assert leases.held() == []
    leases.close()
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 0, checked.output


def test_db_check_names_held_leases_and_unlisted_files_and_cleanup_removes_them(shared_lake, tmp_path):
    db, data = shared_lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    path, sha = _one_file(tmp_path)
    _holder(db, data, path, sha, 0).wait(timeout=60)  # a writer that died holding a lease
    parquet = min(Path(data).rglob("*.parquet"))
    stray = parquet.with_name("ducklake-stray.parquet")
    shutil.copy(parquet, stray)  # as a commit that never finished leaves its files
    checked = CliRunner().invoke(main, ["db", "check", "--db", db])
    assert checked.exit_code == 1
    assert "problem: held-lease: 1 file leases not committed" in checked.output
    assert f"{path}: writer " in checked.output
    assert "its process has ended" in checked.output
    assert "problem: orphan-file: 1 Parquet files under the data path that the catalog does not list" in checked.output
    assert str(stray) in checked.output
    cleaned = run("db", "cleanup", "--db", db)
    assert f"released lease: {path}: writer " in cleaned
    assert f"deleted: {stray}" in cleaned
    assert not stray.exists()
    assert parquet.exists()
    assert run("db", "check", "--db", db).startswith("ok: ")


def test_four_writers_creating_one_new_lake_at_once_all_succeed(shared_lake, tmp_path):
    db, data = shared_lake
    paths = [_one_file(tmp_path, f"w{n}.jsonl", f"t-create-{n}")[0] for n in range(4)]
    starter = tmp_path / "go"
    code = (
        "import os, sys, time\nfrom archiver.cli import main\n"
        f"while not os.path.exists({str(starter)!r}): time.sleep(0.005)\n"
        "main(sys.argv[1:], prog_name='archiver')"
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", code, "ingest", str(path), "--db", db, "--data-path", data, "--wait", "60"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for path in paths
    ]
    time.sleep(1.5)  # every interpreter up and waiting
    starter.touch()
    outputs = [writer.communicate(timeout=300) for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0, 0], [err for _out, err in outputs]
    assert stored(db)[0]["sources"] == 4
    assert run("db", "check", "--db", db).startswith("ok: ")


# --- archiver sql on a lake: read-only and offline (issue 26) ---------------------------------------------


def _data_files(data: str) -> list[str]:
    return sorted(str(path) for path in Path(data).rglob("*") if path.is_file())


def _sql(db: str, statement: str) -> subprocess.CompletedProcess:
    """`archiver sql` in a process of its own: a statement that crashes DuckDB must not take the tests along."""
    return subprocess.run(
        [sys.executable, "-m", "archiver", "sql", statement, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def _refused(db: str, statement: str, named: str, in_process: bool = True) -> None:
    if in_process:
        result = CliRunner().invoke(main, ["sql", statement, "--db", db])
        code, output = result.exit_code, result.output
    else:
        done = _sql(db, statement)
        code, output = done.returncode, done.stderr
    assert code == 2, (statement, output)
    assert output.startswith("Error: refused: "), (statement, output)
    assert output.count("\n") == 1, (statement, output)
    assert named in output, (statement, output)


def test_sql_on_a_lake_writes_nothing_and_connects_nowhere(lake, tmp_path):
    """The escapes tried on lakes: checkpoints and flushes that wrote Parquet files (then `db check` found
    orphans), an option that crashed the process, and scans that opened connections to any host or ran
    statements on the catalog's server. Each is refused in one line, the data path's files as they were."""
    db, data = lake
    run("ingest", str(SAMPLES / "versant-insights"), "--db", db, "--data-path", data)
    with Archive.open(db, read_only=True) as archive:  # DuckLake's name for the catalog database it attaches
        metadata = "__ducklake_metadata_" + archive.con.execute("SELECT current_database()").fetchone()[0]
    quoted, literal = metadata.replace('"', '""'), metadata.replace("'", "''")
    files = _data_files(data)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    escapes = [
        ("SELECT * FROM checkpoint()", "the table function checkpoint()"),
        ("SELECT * FROM force_checkpoint()", "the table function force_checkpoint()"),
        ("SELECT * FROM ducklake_flush_inlined_data(current_database())", "ducklake_flush_inlined_data()"),
        ("SELECT * FROM ducklake_merge_adjacent_files(current_database())", "ducklake_merge_adjacent_files()"),
        (
            "SELECT * FROM ducklake_expire_snapshots(current_database(), older_than => now())",
            "ducklake_expire_snapshots()",
        ),
        (f"SELECT * FROM postgres_scan('host=127.0.0.1 port={port} dbname=x', 'public', 't')", "postgres_scan()"),
        (f"SELECT * FROM postgres_query('{literal}', 'SELECT pg_read_file(''PG_VERSION'')')", "postgres_query()"),
        (f"SELECT * FROM postgres_execute('{literal}', 'CREATE TABLE x (y int)')", "postgres_execute()"),
        (f"SELECT * FROM mysql_query('{literal}', 'SELECT 1')", "mysql_query()"),
        (f"SELECT * FROM read_duckdb('{tmp_path / 'other.duckdb'}')", "read_duckdb()"),
        (f'SELECT * FROM "{quoted}".ducklake_snapshot', f"reads {metadata}.ducklake_snapshot, which is not a table"),
    ]
    for statement, named in escapes:
        _refused(db, statement, named)
    option = "SELECT * FROM ducklake_set_option(current_database(), 'data_inlining_row_limit', 10)"
    _refused(db, option, "ducklake_set_option()", in_process=False)  # crashed the process (SIGSEGV) before
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody tried to connect
    listener.close()
    assert _data_files(data) == files
    assert run("db", "check", "--db", db).startswith("ok: ")
    rows = json.loads(run("sql", "SELECT count(*) AS n FROM claims", "--db", db, "--format", "json"))
    assert rows == [{"n": 38}]
    shown = json.loads(run("sql", "SHOW TABLES", "--db", db, "--format", "json"))
    assert {"name": "claims"} in shown


def _psql(dsn: str, *statements: str) -> None:
    settings = dict(part.split("=", 1) for part in dsn.split())
    psql = servers.pg_bin() / "psql"
    for statement in statements:
        subprocess.run(
            [
                str(psql),
                "-h",
                settings["host"],
                "-p",
                settings["port"],
                "-U",
                "postgres",
                "-d",
                settings["dbname"],
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ],
            check=True,
            capture_output=True,
        )


def test_sql_answers_with_a_catalog_role_that_may_only_select(postgres, tmp_path):
    """The least privilege docs/lakes.md names for readers: a PostgreSQL role with SELECT on the catalog's
    tables, nothing else (no superuser, so no pg_read_file either way)."""
    dsn = postgres()
    data = str(tmp_path / "lake-data")
    run("ingest", str(SAMPLES / "versant-insights"), "--db", f"ducklake:postgres:{dsn}", "--data-path", data)
    _psql(
        dsn,
        "DROP ROLE IF EXISTS lake_reader",
        "CREATE ROLE lake_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
        "GRANT USAGE ON SCHEMA public TO lake_reader",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO lake_reader",
    )
    reader = "ducklake:postgres:" + dsn.replace("user=postgres", "user=lake_reader")
    rows = json.loads(run("sql", "SELECT count(*) AS n FROM claims", "--db", reader, "--format", "json"))
    assert rows == [{"n": 38}]
    assert json.loads(run("stats", "--db", reader, "--json"))["claims"] == 38
    check = CliRunner().invoke(main, ["db", "check", "--db", reader])
    assert check.exit_code == 1
    assert check.output.count("\n") == 1
    assert "`db check` needs the catalog role of a writer" in check.output


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it is sent."""

    def __init__(self) -> None:
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.sock.close()


def plant_in_catalog(db: str, view: str, sql: str) -> None:
    """Replace the SQL the lake's catalog stores for `view`, as anyone who may write the catalog can."""
    location = locate(db)
    update = "UPDATE ducklake_view SET sql = {} WHERE view_name = '{}' AND end_snapshot IS NULL"
    if location.catalog == "sqlite":
        import sqlite3

        with sqlite3.connect(location.catalog_path) as con:
            con.execute(update.format("?", view), [sql])
    elif location.catalog == "duckdb":
        import duckdb

        with duckdb.connect(location.catalog_path) as con:
            con.execute(update.format("?", view), [sql])
    else:
        psql = [str(servers.pg_bin() / "psql"), location.catalog_path, "-v", "ON_ERROR_STOP=1", "-c"]
        subprocess.run([*psql, update.format("$planted$" + sql + "$planted$", view)], check=True, capture_output=True)


def test_a_view_planted_in_the_catalog_binds_nothing(lake, tmp_path):
    """Issue 39, 1: a view whose SQL was replaced in the catalog sends no reader anywhere, reads no file, and
    `db check` names it; on every kind of catalog."""
    db, data = lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    secret = tmp_path / "secret.txt"
    secret.write_text("the-planted-view-read-this-file\n")
    listener = Listener()
    try:
        scan = f"SELECT * FROM postgres_scan('host=127.0.0.1 port={listener.port} dbname=x user=x', 'public', 'x')"
        plant_in_catalog(db, "origin_copies", scan)
        plant_in_catalog(db, "quarantine", f"SELECT content AS reason FROM read_text('{secret}')")
        assert run("sql", "SELECT count(*) AS n FROM origin_copies", "--db", db, "--format", "csv") == "n\n0\n"
        assert "the-planted" not in run("sql", "SELECT reason FROM quarantine", "--db", db)
        assert "claims" in run("stats", "--db", db)
        time.sleep(0.3)
        assert listener.connections == 0
        for listing in (
            "SELECT * FROM duckdb_columns()",
            "SHOW ALL TABLES",
            "DESCRIBE origin_copies",
            "SELECT * FROM information_schema.columns",
            "SELECT * FROM lake.main.origin_copies",
        ):
            out = run("sql", listing, "--db", db, code=None)
            assert ("Traceback" in out, "the-planted" in out) == (False, False), listing
            time.sleep(0.3)
            assert listener.connections == 0, (listing, out)
        run("audit", "--fail-on", "never", "--db", db)
        out = run("db", "check", "--db", db, code=1)
        assert "origin_copies: a view whose SQL is not the archiver's" in out
        assert "quarantine: a view whose SQL is not the archiver's" in out
        time.sleep(0.3)
        assert listener.connections == 0
    finally:
        listener.close()


def test_a_damaged_lake_is_refused_in_one_line(lake, tmp_path):
    """Issue 39, 5: a lake whose table was dropped, or that defines a macro of its own, is refused in one line;
    `db check` lists it."""
    db, data = lake
    run("ingest", str(SAMPLES), "--db", db, "--data-path", data)
    with Archive.open(db) as archive:
        archive.con.execute("CREATE MACRO lower(x) AS 'planted'")
    for command in (["stats"], ["query", "claims"], ["audit"], ["db", "repair"]):
        result = CliRunner().invoke(main, [*command, "--db", db])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.output.count("\n") == 1, result.output
        assert "a macro lower() of its own" in result.output
    assert "a macro lower() of its own" in run("db", "check", "--db", db, code=1)
