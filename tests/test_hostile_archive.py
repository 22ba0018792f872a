"""An archive file a user hands the tool, however it was changed, is read by the package's SQL only or refused
in one line: a view, macro or table planted in the file binds nothing the archiver runs (`store.trust`), and
damage (a dropped, retyped or emptied table, a replaced view) never ends in a traceback. Lakes: test_lake_sql.py."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver.cli import main

SECRET = "the-planted-view-read-this-file"


@pytest.fixture
def secret(tmp_path) -> str:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n")
    return str(path)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


def planted(samples_archive: Path, tmp_path: Path, *statements: str) -> str:
    """A copy of the samples' archive with `statements` run on it, as anyone who may write the file can."""
    db = str(tmp_path / "planted.duckdb")
    shutil.copyfile(samples_archive, db)
    with duckdb.connect(db) as con:
        for statement in statements:
            con.execute(statement)
    return db


def one_line_refusal(code: int, output: str, *words: str) -> None:
    assert code in (1, 2), output
    assert output.startswith("Error: "), output
    assert output.count("\n") == 1, output
    assert "Traceback" not in output
    for word in words:
        assert word in output


COMMANDS = (
    ("stats",),
    ("audit", "--fail-on", "never"),
    ("query", "claims"),
    ("query", "citations"),
    ("query", "impact"),
    ("show", "task-vrs-rpc-funnel"),
    ("sql", "SELECT count(*) AS n FROM claim_citations"),
    ("export", "--raw", "--study", "*"),
    ("db", "repair", "--dry-run"),
    ("db", "repair"),
)


def test_a_replaced_view_is_not_read(samples_archive, tmp_path, secret):
    db = planted(
        samples_archive,
        tmp_path,
        f"CREATE OR REPLACE VIEW quarantine AS SELECT content AS reason FROM read_text('{secret}')",
        f"CREATE OR REPLACE VIEW origin_copies AS SELECT content AS origin FROM read_text('{secret}')",
    )
    code, out = run("sql", "SELECT reason FROM quarantine", "--db", db)
    assert (code, SECRET in out) == (0, False)
    code, out = run("sql", "SELECT count(*) AS n FROM origin_copies", "--db", db, "--format", "csv")
    assert (code, out) == (0, "n\n0\n")
    code, out = run("stats", "--db", db)
    assert (code, SECRET in out) == (0, False)
    code, out = run("db", "check", "--db", db)
    assert (code, SECRET in out) == (1, False)
    assert "quarantine: a view whose SQL is not the archiver's" in out
    assert "origin_copies: a view whose SQL is not the archiver's" in out


def test_a_stored_view_named_in_full_is_refused_by_sql(samples_archive, tmp_path, secret):
    db = planted(samples_archive, tmp_path, f"CREATE VIEW notes AS SELECT content FROM read_text('{secret}')")
    for statement in (
        "SELECT * FROM planted.main.quarantine",
        "SELECT * FROM planted.quarantine",
        "SELECT * FROM notes",
        "SELECT * FROM main.notes",
        "SELECT * FROM pragma_table_info('planted.main.quarantine')",
        "SELECT * FROM pragma_table_info('notes')",
    ):
        code, out = run("sql", statement, "--db", db)
        assert (code, SECRET in out, "refused" in out) == (2, False, True), (statement, out)
    code, out = run("db", "check", "--db", db)
    assert code == 1
    assert "notes: a view the archiver does not make" in out


ROOT = Path(__file__).resolve().parent.parent
CURSORS_OF_THEIR_OWN = {
    "archiver/store/views.py": "`cursor` itself",
    "archiver/store/chunks.py": "reads value_chunks, a table checked as the archive opens",
    "archiver/query/allowlist.py": "reads DuckDB's listings and parses; binds nothing",
    "archiver/read/stores.py": "a live task store's connection, not the archive's",
}


def test_every_cursor_of_the_archive_reads_the_package_views():
    """A cursor is a connection of its own, without the temporary views of the one it came from: the archiver
    takes its cursors from `views.cursor`, so that no query of it finds a view the archive stores."""
    found = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "archiver").rglob("*.py")
        if ".cursor()" in path.read_text(encoding="utf-8")
    }
    assert found <= set(CURSORS_OF_THEIR_OWN), found - set(CURSORS_OF_THEIR_OWN)


def test_an_untouched_archive_has_no_stored_view_problem(samples_copy):
    code, out = run("db", "check", "--db", samples_copy)
    assert (code, out.startswith("ok: ")) == (0, True), out


@pytest.mark.parametrize(
    ("statements", "named"),
    [
        (["DROP TABLE claims"], "its table claims is missing"),
        (
            ["DROP TABLE claims", "CREATE VIEW claims AS SELECT content AS value FROM read_text('{secret}')"],
            "claims is a view, not the archive's table",
        ),
        (["ALTER TABLE claims ALTER COLUMN value TYPE VARCHAR"], "its column claims.value is VARCHAR, not DOUBLE"),
        (["ALTER TABLE results DROP COLUMN origin"], "its column results.origin is missing"),
        (["ALTER TABLE parts ADD COLUMN planted VARCHAR"], "its table parts has a column planted"),
        (["CREATE MACRO lower(x) AS (SELECT content FROM read_text('{secret}'))"], "a macro lower() of its own"),
        (["CREATE MACRO range(x) AS TABLE SELECT content FROM read_text('{secret}')"], "a table macro range()"),
        (
            ["DROP VIEW origin_copies", "CREATE TABLE origin_copies(x INT)", "DELETE FROM schema_views"],
            "origin_copies is a table, where the archiver keeps its view",
        ),
        (
            [
                "DROP TABLE schema_migrations",
                "CREATE VIEW schema_migrations AS SELECT 99 AS version, content AS name FROM read_text('{secret}')",
            ],
            "schema_migrations is a view",
        ),
    ],
    ids=[
        "dropped",
        "table-as-view",
        "retyped",
        "column-dropped",
        "column-added",
        "macro",
        "table-macro",
        "table-for-view",
        "bookkeeping-as-view",
    ],
)
def test_a_damaged_archive_is_refused_in_one_line(samples_archive, tmp_path, secret, statements, named):
    db = planted(samples_archive, tmp_path, *(s.format(secret=secret) for s in statements))
    for command in COMMANDS:
        code, out = run(*command, "--db", db)
        if "is a table, where" in named and command == ("db", "repair", "--dry-run"):
            assert code == 0  # it makes no views (it never upgrades), and reads tables only
            continue
        one_line_refusal(code, out, "the archive is damaged", named)
        assert SECRET not in out
    code, out = run("db", "check", "--db", db)
    assert (code, named in out, SECRET in out, "Traceback" in out) == (1, True, False, False), out


DAMAGE = (
    "DROP TABLE {table}",
    "ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR",
    "ALTER TABLE {table} DROP COLUMN {column}",
    "DELETE FROM {table}",
    "DROP TABLE {table}; CREATE VIEW {table} AS SELECT 1 AS x",
    "CREATE OR REPLACE VIEW {view} AS SELECT 1 AS x",
    "DROP VIEW {view}",
    "DROP VIEW {view}; CREATE TABLE {view}(x INT)",
    "DELETE FROM schema_views",
)
TABLES = {
    "claims": "value",
    "results": "claims",
    "parts": "kind",
    "records": "status",
    "sources": "alias_of",
    "citations": "valid",
    "verdicts": "verdict",
    "value_chunks": "seq",
}
VIEW_NAMES = ("quarantine", "claim_citations", "citation_index", "origin_copies", "latest_verdicts")


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("ARCHIVER_FUZZ_EXAMPLES") or 12),
    derandomize=not os.environ.get("ARCHIVER_FUZZ_SEED"),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    damage=st.lists(
        st.tuples(st.sampled_from(DAMAGE), st.sampled_from(sorted(TABLES)), st.sampled_from(VIEW_NAMES)),
        min_size=1,
        max_size=3,
    ),
    cut=st.none() | st.floats(min_value=0.05, max_value=0.99),
)
def test_random_damage_never_ends_in_a_traceback(samples_archive, tmp_path_factory, damage, cut):
    """Issue 39, 5: drops, retypes, emptied tables, tables become views, replaced and dropped views, and the
    file cut short (`cut`: the fraction kept), through every command."""
    tmp_path = tmp_path_factory.mktemp("damaged")
    db = str(tmp_path / "damaged.duckdb")
    shutil.copyfile(samples_archive, db)
    with duckdb.connect(db) as con:
        for statement, table, view in damage:
            with contextlib.suppress(duckdb.Error):  # a table dropped already, say: the damage is what was done
                con.execute(statement.format(table=table, column=TABLES[table], view=view))
    if cut is not None:
        with open(db, "r+b") as handle:
            handle.truncate(int(Path(db).stat().st_size * cut))
    for command in (*COMMANDS, ("db", "check"), ("verify", "--fail-on", "never")):
        code, out = run(*command, "--db", db)
        assert "Traceback" not in out, (damage, command, out)
        if code not in (0, 1, 2):
            pytest.fail(f"{damage} {command}: exit {code}: {out}")


def test_a_macro_planted_after_a_clean_read_is_found(samples_archive, tmp_path, secret):
    """What was found clean is remembered by the file's state (`trust.unplanted`): a write changes it."""
    db = planted(samples_archive, tmp_path)
    assert run("stats", "--db", db)[0] == 0
    assert run("stats", "--db", db)[0] == 0  # remembered
    with duckdb.connect(db) as con:
        con.execute(f"CREATE MACRO lower(x) AS (SELECT content FROM read_text('{secret}'))")
    code, out = run("stats", "--db", db)
    one_line_refusal(code, out, "a macro lower() of its own")
