"""Clear refusals: `--db` naming what is not a usable archive, a full disk, a newer schema, an ingest that
found nothing, and DuckDB connections that never reach for an extension. Each ends in one line, exit 1,
the file as it was."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.errors import ArchiverError
from archiver.store.connection import is_conflict
from archiver.store.migrations import available

from .lineage_data import build
from .transcripts import SAMPLES, assert_offline_and_locked

NEWEST = max(m.version for m in available())


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(result) -> str:
    """The single line the CLI printed for a refusal (and nothing else: no traceback)."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory`, by relative path: a refusal must leave them byte for byte."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def inputs(write) -> list[str]:
    return build(write)


@pytest.fixture
def good(tmp_path, inputs) -> Path:
    """An archive holding the lineage samples, closed."""
    path = tmp_path / "dbs" / "good.duckdb"
    path.parent.mkdir()
    with Archive.open(str(path)) as archive:
        archive.ingest(inputs, workers=1)
    return path


def not_archives(folder: Path) -> dict[str, tuple[Path, str]]:
    """Things `--db` may wrongly name, with a word the refusal must say."""
    folder.mkdir(exist_ok=True)
    text = folder / "notes.txt"
    text.write_text("hello\n")
    empty = folder / "empty.duckdb"
    empty.write_bytes(b"")
    lite = folder / "tasks.sqlite"
    con = sqlite3.connect(lite)
    con.execute("CREATE TABLE tasks (id TEXT)")
    con.commit()
    con.close()
    directory = folder / "a-directory"
    directory.mkdir()
    return {
        "text": (text, "not a DuckDB archive"),
        "empty": (empty, "empty file"),
        "sqlite": (lite, "SQLite database"),
        "directory": (directory, "is a directory"),
    }


@pytest.mark.parametrize("kind", ["text", "empty", "sqlite", "directory"])
@pytest.mark.parametrize("command", [["stats"], ["ingest", "IN"], ["sql", "SELECT 1"], ["db", "upgrade"]])
def test_db_that_is_not_an_archive(tmp_path, inputs, kind, command):
    path, says = not_archives(tmp_path / "things")[kind]
    before = snapshot(tmp_path / "things")
    args = [inputs[0] if arg == "IN" else arg for arg in command]
    result = run(*args, "--db", str(path))
    assert result.exit_code == 1
    line = one_line_error(result)
    assert str(path) in line
    assert says in line
    assert "pass --db" in line
    assert snapshot(tmp_path / "things") == before


@pytest.mark.slow
def test_sqlite_db_does_not_reach_for_an_extension(tmp_path, monkeypatch):
    """Before: DuckDB tried to download sqlite_scanner (and failed offline with a 40-line traceback)."""
    path, _says = not_archives(tmp_path / "things")["sqlite"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = run("stats", "--db", str(path))
    line = one_line_error(result)
    assert "sqlite_scanner" not in line
    assert "download" not in line.lower()
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.duckdb_extension"))
    process = subprocess.run(
        [sys.executable, "-m", "archiver", "ingest", str(path), "--db", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 1
    assert process.stdout == ""
    expected = (
        f"Error: {path}: is a SQLite database, not an archive; pass --db an archive file, or a new path "
        f"to create one (to ingest an A2A task store: archiver ingest {path}; a lake with a SQLite "
        f"catalog: --db ducklake:sqlite:{path})"
    )
    assert process.stderr.splitlines() == [expected]


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "short", "corrupt"])
@pytest.mark.parametrize("command", [["stats"], ["ingest", "IN"]])
def test_damaged_archive(good, inputs, damage, command):
    data = good.read_bytes()
    if damage == "truncated":
        good.write_bytes(data[: len(data) // 2])
    elif damage == "short":
        good.write_bytes(data[:12288])
    else:
        good.write_bytes(data[:4096] + b"\xff" * 100 + data[4196:])
    before = snapshot(good.parent)
    result = run(*[inputs[0] if arg == "IN" else arg for arg in command], "--db", str(good))
    assert result.exit_code == 1
    line = one_line_error(result)
    assert str(good) in line
    assert "damaged" in line
    assert "backup" in line
    assert snapshot(good.parent) == before


def opens(path: Path) -> bool:
    try:
        Archive.open(str(path), read_only=True).close()
    except ArchiverError:
        return False
    return True


@pytest.mark.slow
def test_damage_found_after_opening_is_one_line_too(good):
    """A corrupt block that the open does not read, met by a query later: one line as well."""
    data = good.read_bytes()
    block, first = 262144, 12288
    met_later = 0
    for start in range(first, len(data) - 200, block):
        good.write_bytes(data[: start + 100] + b"\xab" * 64 + data[start + 164 :])
        if not opens(good):
            continue
        result = run("audit", "--format", "json", "--fail-on", "never", "--db", str(good))
        if result.exit_code == 0:
            continue
        assert result.exit_code == 1
        line = one_line_error(result)
        assert str(good) in line
        assert "damaged" in line
        met_later += 1
    assert met_later


@contextlib.contextmanager
def read_only_folder(folder: Path):
    """`folder`, made read-only: by its mode for a user, by a read-only tmpfs for root (whom modes do not stop)."""
    if os.geteuid() != 0:
        for path in [*folder.rglob("*"), folder]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield folder
        finally:
            for path in [folder, *folder.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        return
    with tmpfs(folder.parent / (folder.name + "-ro"), "64m") as mount:
        for path in folder.iterdir():
            (mount / path.name).write_bytes(path.read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield mount


@contextlib.contextmanager
def tmpfs(mount: Path, size: str):
    """A tmpfs of `size` mounted at `mount` (root only: the test skips elsewhere)."""
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=False, capture_output=True
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.slow
def test_read_only_archive(good, inputs):
    with read_only_folder(good.parent) as folder:
        path = folder / good.name
        before = snapshot(folder)
        result = run("ingest", inputs[0], "--db", str(path))
        assert result.exit_code == 1
        line = one_line_error(result)
        assert str(path) in line
        assert "cannot write" in line
        assert snapshot(folder) == before
        result = run("stats", "--json", "--db", str(path))
        assert result.exit_code == 0, result.output
        assert snapshot(folder) == before


@pytest.mark.slow
def test_a_read_only_archive_with_a_write_ahead_log_is_read_as_it_is(tmp_path, inputs):
    """A killed writer's WAL left beside an archive nobody may write: read commands read it (DuckDB replays the
    log in memory) and say in one line that its recovery was not finished; they used to refuse, telling the
    user that commands that only read work on it."""
    path = tmp_path / "dbs" / "wal.duckdb"
    path.parent.mkdir()
    with Archive.open(str(path)) as archive:
        archive.ingest(inputs, workers=1)
        expected = {**archive.stats(), "validly_cited": archive.cited()}  # what `stats --json` writes
        archive.con.execute("PRAGMA disable_checkpoint_on_shutdown")
    assert Path(f"{path}.wal").stat().st_size > 0
    with read_only_folder(path.parent) as folder:
        before = snapshot(folder)
        result = run("stats", "--json", "--db", str(folder / path.name))
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == expected
        notes = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(notes) == 1
        assert notes[0].startswith(f"note: {folder / path.name}: read as it is: the archive cannot be written")
        refused = run("ingest", inputs[0], "--db", str(folder / path.name))
        assert refused.exit_code == 1
        assert "cannot write to the archive" in one_line_error(refused)
        assert snapshot(folder) == before


def test_missing_archive_for_read_commands(tmp_path):
    for command in (["stats"], ["audit"], ["sql", "SELECT 1"], ["db", "current"], ["query", "claims"]):
        result = run(*command, "--db", str(tmp_path / "missing.duckdb"))
        assert result.exit_code == 1, command
        assert "no archive here" in one_line_error(result)
    assert list(tmp_path.iterdir()) == []


def test_archive_in_a_missing_folder(tmp_path, inputs):
    result = run("ingest", inputs[0], "--db", str(tmp_path / "no" / "such" / "a.duckdb"))
    assert result.exit_code == 1
    assert "folder does not exist" in one_line_error(result)


def test_ingest_of_a_missing_path_leaves_no_archive(tmp_path):
    db = tmp_path / "new.duckdb"
    result = run("ingest", str(tmp_path / "missing" / "path"), "--db", str(db))
    assert result.exit_code == 1
    assert "no such file or directory" in one_line_error(result)
    assert not db.exists()
    assert not Path(str(db) + ".wal").exists()


def test_ingest_of_an_empty_folder_fails_with_a_warning(tmp_path):
    (tmp_path / "empty").mkdir()
    db = tmp_path / "new.duckdb"
    result = run("ingest", str(tmp_path / "empty"), "--db", str(db))
    assert result.exit_code == 1
    assert "warning: no transcript found" in result.stderr
    assert not db.exists()


@pytest.mark.slow
def test_ingest_recognising_nothing_fails_with_a_warning(good, write):
    before = good.read_bytes()
    path = write("junk/notes.json", {"not": "a2a"})
    result = run("ingest", path, "--db", str(good))
    assert result.exit_code == 1
    assert "warning: no transcript found in 1 file" in result.stderr
    assert good.read_bytes() != before  # its record is kept, quarantined, for the audit to report


@pytest.mark.slow
def test_ingest_of_an_empty_folder_into_an_existing_archive_keeps_it(good, tmp_path):
    (tmp_path / "empty").mkdir()
    before = snapshot(good.parent)
    result = run("ingest", str(tmp_path / "empty"), "--db", str(good))
    assert result.exit_code == 1
    assert "warning: no transcript found" in result.stderr
    assert snapshot(good.parent) == before


@pytest.mark.slow
def test_newer_schema_is_refused(good, inputs):
    con = duckdb.connect(str(good))
    con.execute("INSERT INTO schema_migrations VALUES (?, 'from_the_future', now())", [NEWEST + 3])
    con.close()
    before = snapshot(good.parent)
    for command in (["ingest", inputs[0]], ["stats"], ["db", "upgrade"], ["sql", "SELECT 1"]):
        result = run(*command, "--db", str(good))
        assert result.exit_code == 1, command
        line = one_line_error(result)
        assert str(good) in line
        assert f"version {NEWEST + 3}" in line
        assert f"version {NEWEST}" in line
        assert snapshot(good.parent) == before
    result = run("db", "current", "--db", str(good))
    assert result.exit_code == 0
    assert result.output.strip() == str(NEWEST + 3)


def test_disk_full_is_not_a_commit_conflict():
    full = duckdb.TransactionException(
        'TransactionContext Error: Failed to commit: Could not write file "/x/a.duckdb.wal": No space left on device'
    )
    assert not is_conflict(full)
    assert is_conflict(duckdb.TransactionException("TransactionContext Error: Catalog write-write conflict"))


@pytest.mark.slow
def test_disk_full_while_ingesting_into_a_new_archive(tmp_path, inputs):
    with tmpfs(tmp_path / "small-disk", "32k") as disk:
        db = disk / "a.duckdb"
        result = run("ingest", *inputs, "--db", str(db))
        assert result.exit_code == 1
        line = one_line_error(result)
        assert str(db) in line
        assert "disk is full" in line
        assert "conflict" not in line
        assert list(disk.iterdir()) == []


def fill(disk: Path) -> None:
    """Write to `disk` until it is full."""
    with open(disk / "ballast", "wb", buffering=0) as ballast, contextlib.suppress(OSError):
        while True:
            ballast.write(b"\0" * 4096)


@pytest.mark.slow
def test_disk_full_while_ingesting_into_an_archive(tmp_path, inputs, write):
    with tmpfs(tmp_path / "small-disk", "4m") as disk:
        db = disk / "a.duckdb"
        assert run("ingest", inputs[0], "--db", str(db)).exit_code == 0
        counts = run("stats", "--json", "--db", str(db)).output
        before = snapshot(disk)
        fill(disk)
        result = run("ingest", *inputs[1:], "--db", str(db))
        assert result.exit_code == 1
        line = one_line_error(result)
        assert str(db) in line
        assert "disk is full" in line
        assert "conflict" not in line
        assert db.read_bytes() == before["a.duckdb"]
        (disk / "ballast").unlink()
        assert run("stats", "--json", "--db", str(db)).output == counts
        assert run("db", "check", "--db", str(db)).exit_code == 0


@pytest.mark.slow
def test_connections_never_fetch_or_load_extensions_and_are_locked(good):
    with Archive.open(str(good), read_only=True) as archive:
        assert_offline_and_locked(archive.con)


def test_verify_worker_connection_is_offline_and_locked():
    from archiver.offline import offline_connection

    with offline_connection() as con:
        assert con.execute(
            "SELECT current_setting('autoinstall_known_extensions'), "
            "current_setting('autoload_known_extensions'), "
            "current_setting('lock_configuration')"
        ).fetchone() == (False, False, True)


@pytest.mark.slow
def test_sql_refuses_what_needs_an_extension_and_reads_local_files(good, tmp_path):
    result = run("sql", "SELECT * FROM read_csv('https://example.invalid/x.csv')", "--db", str(good))
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "httpfs" in line
    assert "never installs or loads" in line
    (tmp_path / "local.csv").write_text("a,b\n1,2\n3,4\n")
    result = run(
        "sql",
        f"SELECT sum(b)::INTEGER AS total FROM read_csv('{tmp_path / 'local.csv'}')",
        "--format",
        "json",
        "--db",
        str(good),
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"total": 6}]


def test_a_question_out_of_memory_says_so_in_one_line_not_as_an_ingest(samples_copy, monkeypatch):
    """A command that asks (here a filtered audit, held to a memory bound too small for its query) and runs out of
    memory says so in one line, as a question that changed nothing: not the ingest's advice to raise
    ARCHIVER_INGEST_MEMORY_MB (a filtered audit of 10M claims once said "the ingest's writer ran out of memory")."""
    import archiver.audit.run

    monkeypatch.setattr(archiver.audit.run, "AUDIT_MEMORY_MB", 1)
    failed = run("audit", "--db", samples_copy, "--agent", "*", "--fail-on", "never")
    assert failed.exit_code == 1, failed.output
    line = one_line_error(failed)
    assert "the command ran out of the memory and disk it is held to" in line
    assert "nothing was changed" in line
    assert "ingest" not in line


@pytest.mark.slow
def test_a_writer_out_of_memory_says_so_in_one_line_and_keeps_what_it_committed(tmp_path, monkeypatch):
    """DuckDB keeps values of about 64 kB and more in memory until they are written out, and a commit past
    its memory limit fails: that is no commit conflict to retry, but one line naming the limit to raise; what
    was committed before stays, and a run with more memory stores the rest. (Such values are stored in
    chunks: kept whole here, they stand for anything else a commit holds in memory.)"""
    import archiver.ingest.run
    import archiver.load.chunks

    folder = tmp_path / "in"
    folder.mkdir()
    for n in range(600):  # 600 values of 150 kB, twice over (raw and text): past a writer held to 96 MB
        text = f"{n} " + "the share of respondents " * 6000
        task = {"id": f"t{n}", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
        task["artifacts"] = [{"artifactId": "a", "parts": [{"text": text}]}]
        (folder / f"{n:03d}.jsonl").write_text(json.dumps({"jsonrpc": "2.0", "id": n, "result": {"task": task}}) + "\n")
    db = str(tmp_path / "a.duckdb")
    monkeypatch.setattr(archiver.load.chunks, "CHUNK_BYTES", 2**30)  # whole cells, as before schema 11
    monkeypatch.setattr(archiver.ingest.run, "INGEST_MEMORY_MB", 16)
    monkeypatch.setattr(archiver.ingest.run, "GROUP_RECORDS", 10)
    failed = run("ingest", str(folder), "--db", db, "--workers", "1")
    assert failed.exit_code == 1
    line = one_line_error(failed)
    assert "the ingest's writer ran out of memory" in line
    assert "ARCHIVER_INGEST_MEMORY_MB" in line
    assert "conflicted" not in line
    with Archive.open(db) as archive:
        kept = archive.con.execute("SELECT count(*) FROM sources").fetchone()[0]
    assert 0 < kept < 600
    monkeypatch.setattr(archiver.ingest.run, "INGEST_MEMORY_MB", 256)
    rerun = run("ingest", str(folder), "--db", db, "--workers", "1", "--json")
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(rerun.stdout)["files_unchanged"] == kept
    with Archive.open(db) as archive:
        assert archive.con.execute("SELECT count(*) FROM sources").fetchone()[0] == 600


@pytest.mark.parametrize(
    ("db", "said"),
    [
        ("ducklake: ", "name the catalog after 'ducklake:'"),
        ("ducklake:", "name the catalog after 'ducklake:'"),
        ("ducklake:mysql:x", "no catalog of kind 'mysql'"),
        ("ducklake:s3://bucket/lake", "no catalog of kind 's3'"),
    ],
)
def test_a_malformed_lake_location_is_a_usage_error_that_creates_nothing(tmp_path, monkeypatch, db, said):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["ingest", str(SAMPLES), "--db", db])
    assert result.exit_code == 2, result.output
    assert f"Error: {db}: {said}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(tmp_path.iterdir()) == []


def test_the_lake_prefix_is_read_in_any_case(tmp_path):
    from archiver.store.backend import locate

    assert locate(f"DuckLake:{tmp_path}/x.ducklake") == locate(f"ducklake:{tmp_path}/x.ducklake")
    assert locate(f"ducklake:SQLite:{tmp_path}/c.sqlite").catalog == "sqlite"
    assert locate(f"ducklake:duckdb:{tmp_path}/a:b").catalog_path == f"{tmp_path}/a:b"


@pytest.mark.parametrize("given", ["nan", "inf", "-1", "soon"])
@pytest.mark.parametrize(
    "command", [["stats"], ["ingest", "IN"], ["record", "--upstream", "http://127.0.0.1:9", "--read-timeout"]]
)
def test_a_duration_that_is_not_seconds_is_a_usage_error(tmp_path, monkeypatch, command, given):
    """`--wait nan` was taken (and `-1`), a wait that never ends or never begins; every duration option is
    a finite number of seconds, 0 or more."""
    monkeypatch.chdir(tmp_path)
    option = [] if command[0] == "record" else ["--db", str(tmp_path / "a.duckdb"), "--wait"]
    args = [str(tmp_path) if arg == "IN" else arg for arg in command]
    result = run(*args, *option, given)
    assert result.exit_code == 2, result.output
    assert "is not a number of seconds" in result.stderr
    assert sorted(tmp_path.iterdir()) == []  # no archive, no spool
