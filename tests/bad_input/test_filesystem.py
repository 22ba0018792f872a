"""Directories with files that cannot be read, and symlink loops.

The tests run as root, for whom chmod 000 changes nothing, so unreadable files are made honestly
otherwise: a FIFO (opening it would block for ever), a dangling symlink, a symlink to itself, and
a file removed between the directory listing and its reading.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.ingest import run as ingest_module
from tests.transcripts import rows

from .cases import assert_quarantine, good, ingest, tasks

ROOT = Path(__file__).resolve().parents[2]


def folder(tmp_path, names=("a.jsonl", "c.jsonl")):
    top = tmp_path / "dump"
    top.mkdir()
    for number, name in enumerate(names, start=1):
        (top / name).write_bytes(good(number) + b"\n")
    return top


@pytest.mark.slow
def test_a_fifo_in_a_directory_is_quarantined_without_blocking(archive, tmp_path):
    top = folder(tmp_path)
    os.mkfifo(top / "b.pipe")
    summary = ingest(archive, str(top))
    assert_quarantine(
        archive, summary, str(top / "b.pipe"), [("file", "cannot read the file: not a regular file (a FIFO)")]
    )
    assert rows(archive, "SELECT raw FROM quarantine") == [(b"",)]  # nothing could be read, nothing is lost
    assert tasks(archive, str(top / "a.jsonl")) == ["t1"]
    assert tasks(archive, str(top / "c.jsonl")) == ["t2"]


@pytest.mark.slow
def test_a_dangling_symlink_in_a_directory(archive, tmp_path):
    top = folder(tmp_path)
    os.symlink(tmp_path / "gone.jsonl", top / "b.jsonl")
    summary = ingest(archive, str(top))
    assert_quarantine(
        archive, summary, str(top / "b.jsonl"), [("file", "cannot read the file: No such file or directory")]
    )
    assert summary.files == 3
    assert rows(archive, "SELECT count(*) FROM results") == [(2,)]


@pytest.mark.slow
def test_a_file_removed_between_listing_and_reading(archive, tmp_path, monkeypatch):
    top = folder(tmp_path, ("a.jsonl", "b.jsonl", "c.jsonl"))
    listed = ingest_module.expand

    def expand_then_remove(paths, *args):
        for source in listed(paths, *args):
            if source.path.endswith("b.jsonl"):
                os.remove(source.path)
            yield source

    monkeypatch.setattr(ingest_module, "expand", expand_then_remove)
    summary = ingest(archive, str(top))
    assert_quarantine(
        archive, summary, str(top / "b.jsonl"), [("file", "cannot read the file: No such file or directory")]
    )
    assert tasks(archive, str(top / "a.jsonl")) == ["t1"]
    assert tasks(archive, str(top / "c.jsonl")) == ["t3"]


@pytest.mark.slow
def test_symlink_loops(archive, tmp_path):
    """A file symlink to itself is quarantined; a directory symlink is not followed, so a loop ends."""
    top = folder(tmp_path)
    os.symlink(top / "self.jsonl", top / "self.jsonl")
    os.symlink(top, top / "again")
    (top / "sub").mkdir()
    os.symlink("..", top / "sub" / "up")
    summary = ingest(archive, str(top))
    assert_quarantine(
        archive, summary, str(top / "self.jsonl"), [("file", "cannot read the file: Too many levels of symbolic links")]
    )
    assert rows(archive, "SELECT path FROM sources ORDER BY path") == [
        (str(top / name),) for name in ("a.jsonl", "c.jsonl", "self.jsonl")
    ]


@pytest.mark.slow
def test_unreadable_file_is_idempotent_and_read_once_it_is_fixed(archive, tmp_path):
    top = folder(tmp_path)
    os.symlink(tmp_path / "later.jsonl", top / "b.jsonl")
    ingest(archive, str(top))
    again = ingest(archive, str(top))
    assert (again.files_unchanged, again.quarantined) == (3, 0)  # unchanged: skipped, reported once
    assert rows(archive, "SELECT count(*) FROM quarantine") == [(1,)]
    (tmp_path / "later.jsonl").write_bytes(good(9) + b"\n")
    fixed = ingest(archive, str(top))
    assert fixed.quarantined == 0
    assert tasks(archive, str(top / "b.jsonl")) == ["t9"]


@pytest.mark.slow
def test_cli_over_a_directory_of_bad_files_reports_each_on_one_line(tmp_path):
    top = folder(tmp_path)
    os.mkfifo(top / "pipe")
    os.symlink(top / "loop", top / "loop")
    (top / "blob.bin").write_bytes(bytes(range(256)))
    (top / "cut.jsonl").write_bytes(good(5)[:50] + b"\n" + good(6) + b"\n")
    result = CliRunner().invoke(main, ["ingest", str(top), "--db", str(tmp_path / "a.duckdb"), "--json"])
    assert result.exit_code == 1, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("quarantined:")] == [
        f"quarantined: {top}/blob.bin: file: not JSON, JSON Lines, SSE or SQLite (binary)",
        (
            f"quarantined: {top}/cut.jsonl: line 1: invalid JSON: an unescaped control character (U+000A) in a string: "
            "line 1 column 51 (byte 50)"
        ),
        f"quarantined: {top}/loop: file: cannot read the file: Too many levels of symbolic links",
        f"quarantined: {top}/pipe: file: cannot read the file: not a regular file (a FIFO)",
    ]
    assert '"tasks": 3' in result.stdout


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_ingested_under_an_escaped_name(archive, tmp_path):
    """The real bytes are read; the name is archived with its undecodable bytes written as \\xNN."""
    top = folder(tmp_path)
    (tmp_path / "dump" / os.fsdecode(b"b\xff\xfe.jsonl")).write_bytes(good(2) + b"\n")
    summary = ingest(archive, str(top))
    escaped = f"{top}/b\\xff\\xfe.jsonl"
    assert (summary.files, summary.quarantined) == (3, 0)
    assert rows(archive, "SELECT path FROM sources ORDER BY path") == [
        (str(top / "a.jsonl"),),
        (escaped,),
        (str(top / "c.jsonl"),),
    ]
    assert tasks(archive, escaped) == ["t2"]
    assert ingest(archive, str(top)).files_unchanged == 3  # the same name every run: unchanged, skipped
    real = os.fsdecode(os.fsencode(top) + b"/b\xff\xfe.jsonl")
    named = ingest(archive, real)  # named, not walked
    assert (named.files, named.files_unchanged) == (1, 1)
    by_real, by_escaped = (archive.audit(source=given).summary for given in (real, escaped))
    assert by_real == by_escaped
    assert (by_real["results"], by_real["filters"]["source"]) == (1, [escaped])


@pytest.mark.slow
def test_sqlite_stores_under_names_sqlite_uris_would_misread(archive, tmp_path):
    """An undecodable byte, "#", "?" and "%" in a task store's path: its rows are read all the same."""
    from tests.test_ingest import make_task_store

    names = [os.fsdecode(b"t\xff.db"), "t#1.db", "t?x=1.db", "t%41.db"]
    for name in names:
        make_task_store(tmp_path / name)
    summary = ingest(archive, *(str(tmp_path / name) for name in names))
    assert (summary.files, summary.records, summary.quarantined) == (4, 12, 0)
    assert rows(archive, "SELECT path, recognised FROM sources ORDER BY path") == sorted(
        (str(tmp_path / name).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), 3)
        for name in names
    )


@pytest.mark.slow
def test_cli_over_a_directory_with_an_undecodable_name(tmp_path):
    top = folder(tmp_path)
    (top / os.fsdecode(b"b\xff.jsonl")).write_bytes(good(2)[:40] + b"\n")
    result = CliRunner().invoke(main, ["ingest", str(top), "--db", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 1, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("quarantined:")] == [
        f"quarantined: {top}/b\\xff.jsonl: line 1: invalid JSON: unexpected end of the text: line 2 column 1 (byte 41)"
    ]


@pytest.mark.slow
def test_a_missing_undecodable_name_is_named_with_escapes(tmp_path):
    missing = os.fsdecode(os.fsencode(tmp_path) + b"/gone\xff.jsonl")
    result = CliRunner().invoke(main, ["ingest", missing, "--db", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path}/gone\\xff.jsonl: no such file or directory\n"


def sources_of(db: str) -> list[str]:
    with Archive.open(db, read_only=True) as opened:
        return [path for (path,) in rows(opened, "SELECT DISTINCT path FROM sources ORDER BY path")]


@pytest.mark.slow
def test_an_archive_inside_the_ingested_folder_never_ingests_itself(tmp_path, monkeypatch):
    """`cd dumps && archiver ingest .` twice: the .duckdb and its .wal are not sources, nothing grows."""
    top = folder(tmp_path)
    monkeypatch.chdir(top)
    first = CliRunner().invoke(main, ["ingest", ".", "--db", "archive.duckdb", "--json"])
    second = CliRunner().invoke(main, ["ingest", ".", "--db", "archive.duckdb", "--json"])
    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    assert json.loads(second.stdout)["files_unchanged"] == 2
    assert json.loads(second.stdout)["archive_files_skipped"] >= 1  # archive.duckdb, and its .wal if there is one
    assert sources_of(str(top / "archive.duckdb")) == [str(top / "a.jsonl"), str(top / "c.jsonl")]
    plain = CliRunner().invoke(main, ["ingest", "archive.duckdb", "--db", "archive.duckdb"])
    assert "skipped 1 paths to the archive's own files" in plain.stdout.splitlines()


@pytest.mark.slow
def test_the_archive_is_not_ingested_through_links_globs_or_relative_paths(archive, tmp_path):
    top = folder(tmp_path)
    own = tmp_path / "archive.duckdb"
    os.symlink(own, top / "link.duckdb")
    os.link(own, top / "hard.duckdb")
    os.symlink(tmp_path, top / "up")  # a directory symlink named explicitly is walked
    (top / "notes.wal").write_bytes(good(3) + b"\n")  # a .wal that is not the archive's is read
    summary = ingest(
        archive,
        str(top),
        str(top / "*"),
        f"{top}/../archive.duckdb",
        str(top / "up" / "archive.duckdb"),
        f"{own}.wal",
        str(top / "up"),
    )
    assert sorted({path for (path,) in rows(archive, "SELECT path FROM sources")}) == sorted(
        [
            str(top / "a.jsonl"),
            str(top / "c.jsonl"),
            str(top / "notes.wal"),
            str(top / "up" / "dump" / "a.jsonl"),
            str(top / "up" / "dump" / "c.jsonl"),
            str(top / "up" / "dump" / "notes.wal"),
        ]
    )
    assert summary.archive_files_skipped >= 7


@pytest.mark.lake
@pytest.mark.parametrize("catalog", ["ducklake:", "ducklake:sqlite:"])
def test_a_lake_inside_the_ingested_folder_never_ingests_itself(tmp_path, monkeypatch, catalog):
    """Its catalog file, the catalog's .wal, the .leases file and the Parquet files of its data path."""
    pytest.importorskip("duckdb_extension_ducklake", reason="the lake extras are not installed")
    top = folder(tmp_path)
    (top / "c.jsonl").write_bytes(b"".join(good(number) + b"\n" for number in range(2, 40)))  # past inlining
    monkeypatch.chdir(top)
    db = f"{catalog}lake.catalog"
    for _run in range(2):
        with Archive.open(db) as lake:
            summary = lake.ingest(["."], workers=1)
            paths = [path for (path,) in rows(lake, "SELECT DISTINCT path FROM sources ORDER BY path")]
    assert any(name.endswith(".parquet") for _root, _dirs, files in os.walk(top) for name in files)
    assert paths == [str(top / "a.jsonl"), str(top / "c.jsonl")]
    assert summary.files_unchanged == 2
    assert summary.archive_files_skipped >= 2


@pytest.mark.slow
def test_a_glob_matching_a_dangling_symlink_and_a_loop_quarantines_them(archive, tmp_path):
    """As in a directory walk: a glob's match that cannot be read is quarantined; the run goes on."""
    top = folder(tmp_path)
    os.symlink(tmp_path / "gone.jsonl", top / "b.jsonl")
    os.symlink(top / "d.jsonl", top / "d.jsonl")
    summary = ingest(archive, str(top / "*.jsonl"))
    assert_quarantine(
        archive, summary, str(top / "b.jsonl"), [("file", "cannot read the file: No such file or directory")]
    )
    assert_quarantine(
        archive, summary, str(top / "d.jsonl"), [("file", "cannot read the file: Too many levels of symbolic links")]
    )
    assert tasks(archive, str(top / "a.jsonl")) == ["t1"]
    assert tasks(archive, str(top / "c.jsonl")) == ["t2"]


@pytest.mark.slow
def test_hostile_inputs_prepared_by_worker_processes_store_everything(tmp_path):
    """Enough input for the worker pool: an undecodable name, a Part 1000 deep and a bare-CR capture,
    each prepared in a worker process, all stored."""
    from .test_json_values import with_data

    top = tmp_path / "dump"
    top.mkdir()
    lines = b"".join(good(number) + b"\n" for number in range(10, 3000))  # 1.8 MB a file: past POOL_MIN_BYTES
    (top / os.fsdecode(b"b\xff.jsonl")).write_bytes(lines)
    (top / "deep.jsonl").write_bytes(with_data(2, b'{"a":' * 1000 + b"1" + b"}" * 1000) + b"\n" + lines)
    (top / "cr.sse").write_bytes(b"".join(b"data: " + good(number) + b"\r\r" for number in range(3000, 6000)))
    db = str(tmp_path / "a.duckdb")
    result = CliRunner().invoke(main, ["ingest", str(top), "--db", db, "--workers", "2", "--json"])
    assert result.exit_code == 0, result.output
    with Archive.open(db, read_only=True) as opened:
        assert rows(opened, "SELECT path, records, quarantined FROM sources ORDER BY path") == [
            (f"{top}/b\\xff.jsonl", 2990, 0),
            (f"{top}/cr.sse", 3000, 0),
            (f"{top}/deep.jsonl", 2991, 0),
        ]


def bound_by_permissions() -> list[str]:
    """The prefix of a command whose process chmod binds: none for a user; for root (who reads past
    permissions), capsh dropping the capabilities that let it."""
    if os.geteuid() != 0:
        return []
    capsh = shutil.which("capsh")
    if capsh is None:
        pytest.skip("running as root without capsh: chmod 000 binds nothing here")
    return [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$@"', "capsh"]


def ingest_bound(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*bound_by_permissions(), sys.executable, "-m", "archiver", "ingest", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.fixture
def locked(tmp_path):
    """A folder of dumps holding a folder that cannot be listed (chmod 000), with a transcript inside."""
    top = folder(tmp_path)
    inside = top / "locked"
    inside.mkdir()
    (inside / "b.jsonl").write_bytes(good(3) + b"\n")
    inside.chmod(0)
    yield top
    inside.chmod(0o755)


@pytest.mark.slow
def test_a_folder_that_cannot_be_listed_is_a_warning_naming_it_and_counted(locked, tmp_path):
    db = str(tmp_path / "a.duckdb")
    result = ingest_bound(str(locked), "--db", db)
    assert result.returncode == 0, result.stderr
    assert f"warning: {locked}/locked: permission denied: folder not read" in result.stderr.splitlines()
    assert result.stdout.splitlines()[-1] == "skipped 1 folder that cannot be listed"
    counted = ingest_bound(str(locked), "--db", db, "--json")
    assert json.loads(counted.stdout)["folders_unreadable"] == [f"{locked}/locked: permission denied"]
    with Archive.open(db, read_only=True) as archive:
        assert rows(archive, "SELECT path FROM sources ORDER BY path") == [
            (str(locked / "a.jsonl"),),
            (str(locked / "c.jsonl"),),
        ]


@pytest.mark.slow
def test_naming_a_folder_that_cannot_be_listed_or_a_file_in_it_says_permission_denied(locked, tmp_path):
    db = str(tmp_path / "a.duckdb")
    named = ingest_bound(str(locked / "locked"), "--db", db)
    assert (named.returncode, named.stderr) == (
        1,
        f"Error: {locked}/locked: permission denied: cannot list the folder\n",
    )
    inside = ingest_bound(str(locked / "locked" / "b.jsonl"), "--db", db)
    assert (inside.returncode, inside.stderr) == (
        1,
        f"Error: {locked}/locked/b.jsonl: permission denied: a folder on its path cannot be searched\n",
    )
    assert not os.path.exists(db)


@pytest.mark.slow
def test_a_file_read_after_it_could_not_be_read_retires_its_finding(archive, tmp_path):
    top = folder(tmp_path)
    os.symlink(tmp_path / "later.jsonl", top / "b.jsonl")
    ingest(archive, str(top))
    findings = archive.audit(rules=["unreadable-record"]).findings
    assert [(f.source_path, f.severity) for f in findings] == [(str(top / "b.jsonl"), "error")]
    (tmp_path / "later.jsonl").write_bytes(good(9) + b"\n")
    assert ingest(archive, str(top)).quarantined == 0
    assert archive.audit(rules=["unreadable-record"]).findings == []
    assert rows(archive, "SELECT count(*) FROM quarantine") == [(1,)]  # what happened stays on record
