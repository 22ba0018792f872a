"""A file name holding a terminal escape, through every command: what each writes for people shows it as its
escape (`\\x1b`), and no output holds a raw control character (issue 39: `db check` wrote raw ESC and BEL in
its `missing-records` and `result-records` lines)."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from archiver.cli import main
from tests.bad_input.cases import good

HOSTILE = "x\x1b]2;PWNED\x07"
SHOWN = "x\\x1b]2;PWNED\\x07"
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    for stream in (result.stdout, result.stderr):
        assert not RAW_CONTROLS.search(stream), (args, stream)
    return result


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, str]:
    """A folder holding the hostile name (a cited task) and an archive of it."""
    top = tmp_path_factory.mktemp("hostile")
    (top / "in").mkdir()
    (top / "in" / f"{HOSTILE}.jsonl").write_bytes(good(1) + b"\n" + good(2) + b"\n")
    (top / "in" / f"{HOSTILE}.txt").write_bytes(b"not json at all\n")
    db = str(top / "a.duckdb")
    result = run("ingest", str(top / "in"), "--db", db)
    assert f"{SHOWN}.txt" in result.stderr
    return top, db


def test_every_command_shows_the_name_escaped(hostile, tmp_path):
    top, db = hostile
    name = str(top / "in" / f"{HOSTILE}.jsonl")
    commands = [
        ("ingest", name, "--db", db),
        ("ingest", str(top / "in" / f"{HOSTILE}-gone.jsonl"), "--db", db),
        ("stats", "--db", db),
        ("db", "current", "--db", db),
        ("db", "check", "--db", db),
        ("db", "repair", "--dry-run", "--db", db),
        ("db", "transfer", "--to", str(tmp_path / f"{HOSTILE}.duckdb"), "--db", db),
        ("audit", "--fail-on", "never", "--db", db),
        ("audit", "--fail-on", "never", "--format", "markdown", "--db", db),
        ("query", "claims", "-t", "--db", db),
        ("query", "citations", "-t", "--db", db),
        ("query", "impact", "-t", "--db", db),
        ("query", "impact", "--db", db),
        ("query", "claims", "--source", f"*{HOSTILE}-other*", "--db", db),
        ("query", "claims", "--study", HOSTILE, "--db", db),
        ("show", "t1", "--db", db),
        ("show", HOSTILE, "--db", db),
        ("export", "--raw", "--db", db),
        ("export", "--raw", "--files", str(tmp_path / "files"), "--db", db),
        ("export", "--raw", "--source", HOSTILE, "--db", db),
        ("sql", "SELECT DISTINCT source_path FROM results", "-t", "--db", db),
        ("sql", "SELECT DISTINCT source_path FROM results", "--db", db),
        ("sql", f"SELECT {HOSTILE}", "--db", db),
        ("sql", f"SELECT * FROM '{HOSTILE}.parquet'", "--db", db),
        ("verify", "--data-layer", str(top / f"{HOSTILE}.toml"), "--db", db),
        ("docs", HOSTILE),
        (f"--{HOSTILE}",),
        ("query", HOSTILE),
        ("stats", "--db", db, HOSTILE),
        ("stats", "--db", str(top / "in" / f"{HOSTILE}.txt")),
    ]
    quoted = 0
    for args in commands:
        result = run(*args)
        quoted += SHOWN in result.stdout + result.stderr
    assert quoted >= 15  # the name is there, escaped, wherever a command quotes it


def test_db_check_and_repair_show_the_name_escaped(hostile, tmp_path):
    """The issue's case: one `records` row of the file deleted, then `db check` (and `db repair`)."""
    _top, db = hostile
    torn = str(tmp_path / "torn.duckdb")
    shutil.copy(db, torn)
    with duckdb.connect(torn) as con:
        con.execute(
            "DELETE FROM records WHERE record_id = (SELECT min(record_id) FROM records WHERE source_path LIKE ?)",
            [f"%{HOSTILE}.jsonl"],
        )
        con.execute("INSERT INTO parts SELECT * REPLACE ('gone' AS copy_id) FROM parts LIMIT 1")
    result = run("db", "check", "--db", torn)
    assert result.exit_code == 1
    lines = {line.split(":")[1].strip(): line for line in result.stderr.splitlines() if line.startswith("problem:")}
    assert {"missing-records", "result-records", "part-copy"} <= set(lines)
    assert all(SHOWN in lines[name] for name in ("missing-records", "result-records", "part-copy"))
    result = run("db", "repair", "--db", torn)
    assert result.exit_code == 0
    assert SHOWN in result.stdout


def test_messages_have_one_way_out():
    """Every message of the command line goes out through `cli.say`: click.echo is called, besides, only by
    what writes data (JSON, a transcript page, a page of the manual), so no new message can bypass it."""
    tree = ast.parse((Path(__file__).parent.parent / "archiver" / "cli.py").read_text())
    writers = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    if node.func.attr in ("echo", "secho", "write") and getattr(node.func.value, "id", "") in (
                        "click",
                        "sys",
                    ):
                        writers.add(function.name)
                elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print":
                    writers.add(function.name)
    assert writers == {"say", "emit_json", "show", "docs_command"}
