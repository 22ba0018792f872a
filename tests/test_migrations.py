"""The schema comes only from migrations and upgrades in place (its match with the typed rows: test_schema)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.store import migrations
from archiver.store.tables import CLAIM_INDEX, CLAIM_INDEX_BY_TASK, INDEX_TABLES
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task


@pytest.mark.slow
def test_bulk_tables_declare_no_keys_or_indexes(archive):
    """No key halves a bulk load (`shared/spec/stack-notes.md`); the one index is the kept claim index's by task,
    which no bulk load writes (migration 0018)."""
    assert (
        rows(
            archive,
            "SELECT table_name, constraint_type FROM duckdb_constraints() "
            "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')",
        )
        == []
    )
    assert rows(archive, "SELECT table_name, index_name FROM duckdb_indexes()") == [(CLAIM_INDEX, CLAIM_INDEX_BY_TASK)]
    assert CLAIM_INDEX not in INDEX_TABLES


@pytest.mark.slow
def test_versions_are_recorded_in_order(archive):
    versions = [m.version for m in migrations.available()]
    assert versions == sorted(versions)
    assert versions[0] == 1
    assert rows(archive, "SELECT version FROM schema_migrations ORDER BY version") == [(v,) for v in versions]
    assert archive.version() == versions[-1]


def first_version_archive(path: str, source: str, tmp_path, version: int = 1) -> dict:
    """An archive at schema version `version` (default 1) holding `source` as that version's ingest stored
    it: the rows of today's ingest, in the columns the version had. Returns today's stats of the same input,
    less what an older ingest could not know: what each record yields (`records_<kind>`, from schema 12)."""
    current = str(tmp_path / "current.duckdb")
    with Archive.open(current) as now:
        now.ingest([source])
        expected = now.stats()
    with Archive.open(path, upgrade=False) as old:
        old.upgrade(upto=version)
        old.con.execute(f"ATTACH '{current}' AS now (READ_ONLY)")
        for (table,) in old.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = "
            "current_database() AND table_name <> 'schema_migrations'"
        ).fetchall():
            columns = ", ".join(
                name
                for (name,) in old.con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                    "AND table_name = ? ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            )
            old.con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM now.{table}")
        old.con.execute("DETACH now")
        assert old.version() == version
    unknown = {name: 0 for name in expected if name.startswith("records_")} if version < 12 else {}
    return {**expected, **unknown}


@pytest.mark.slow
def test_an_archive_of_the_first_version_upgrades_in_place_with_its_data(tmp_path, write):
    path = str(tmp_path / "old.duckdb")
    source = write("old.jsonl", [jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())}) for i in range(3)])
    expected = first_version_archive(path, source, tmp_path)
    with Archive.open(path, read_only=True) as upgraded:  # even a read-only open brings it up to date
        assert upgraded.version() == migrations.available()[-1].version
        assert upgraded.stats() == expected
        assert rows(upgraded, "SELECT count(*), count(DISTINCT study) FROM claim_lineage") == [(6, 1)]
        assert upgraded.check() == []
    with Archive.open(path) as again:
        assert again.ingest([source]).files_unchanged == 1
        assert again.healings() == []
        assert again.stats() == expected


@pytest.mark.slow
def test_an_old_archive_that_stored_a_copy_twice_keeps_it_once(tmp_path, write):
    path = str(tmp_path / "old.duckdb")
    source = write("a/old.jsonl", [jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())}) for i in range(3)])
    copy = write("b/old.jsonl", Path(source).read_bytes())
    expected = first_version_archive(path, source, tmp_path)
    with Archive.open(path, upgrade=False) as old:  # as the first version stored the copy: all over again
        for table in ("records", "results", "parts", "citations", "claims"):
            old.con.execute(f"INSERT INTO {table} SELECT * REPLACE (? AS source_path) FROM {table}", [copy])
        old.con.execute(
            "INSERT INTO sources SELECT * REPLACE (? AS path, ingested_at + INTERVAL 1 SECOND AS ingested_at) "
            "FROM sources",
            [copy],
        )
        assert rows(old, "SELECT count(*) FROM results") == [(2 * expected["copies"],)]
    with Archive.open(path) as upgraded:
        assert upgraded.stats() == {**expected, "paths_aliased": 1}
        assert rows(upgraded, "SELECT path, alias_of FROM sources ORDER BY path") == [(source, None), (copy, source)]
        assert upgraded.check() == []
        assert upgraded.ingest([copy]).files_unchanged == 1


@pytest.mark.slow
def test_an_archive_torn_before_the_commit_marker_is_repaired_on_upgrade_and_says_so(tmp_path, write):
    """The SIGKILL of an earlier round, in an archive of schema 6: one file's claims replayed without its
    records, copies, parts or sources row, and claims of Parts never indexed under a file that was committed
    (migration 0007 gives those its committed version). The open that upgrades removes both and says so."""
    path = str(tmp_path / "old.duckdb")
    folder = Path(write("dumps/kept.jsonl", [jsonrpc_result({"task": v1_task("t1", v1_cited_parts())})])).parent
    torn = write("dumps/torn.jsonl", [jsonrpc_result({"task": v1_task("t2", v1_cited_parts())})])
    kept = str(folder / "kept.jsonl")
    expected = first_version_archive(path, str(folder), tmp_path, version=6)
    with Archive.open(path, upgrade=False) as old:
        for table, column in (("sources", "path"), ("records", "source_path"), ("results", "source_path"),
                              ("parts", "source_path"), ("citations", "source_path")):  # fmt: skip
            old.con.execute(f"DELETE FROM {table} WHERE {column} = ?", [torn])
        old.con.execute("INSERT INTO claims SELECT * REPLACE ('torn-' || part_id AS part_id) FROM claims "
                        "WHERE source_path = ?", [kept])  # fmt: skip
        orphans = rows(old, "SELECT count(*) FROM claims WHERE source_path = ? OR part_id LIKE 'torn-%'", [torn])[0][0]
    assert orphans == expected["claims"]  # the torn file's, and as many again of Parts never indexed
    from click.testing import CliRunner

    from archiver.cli import main

    opened = CliRunner().invoke(main, ["stats", "--db", path])
    assert opened.exit_code == 0, opened.output
    assert opened.stderr == (
        f"{path}: removed {orphans} index rows no committed ingest recorded (claims {orphans}); db check lists them\n"
    )
    with Archive.open(path) as upgraded:
        assert upgraded.check() == []
        assert upgraded.ingest([str(folder)]).files_unchanged == 1  # the torn file is stored again, whole
        # the torn file's one record, read again today, says what it yields
        assert upgraded.stats() == {**expected, "healed_rows": orphans, "records_result": 1}


@pytest.mark.slow
def test_cli_db_current_and_upgrade(tmp_path):
    from click.testing import CliRunner

    from archiver.cli import main

    db = str(tmp_path / "cli.duckdb")
    with Archive.open(db, upgrade=False) as old:
        old.upgrade(upto=1)
    runner = CliRunner()
    assert runner.invoke(main, ["db", "current", "--db", db]).output.strip() == "1"
    result = runner.invoke(main, ["db", "upgrade", "--db", db])
    latest = migrations.available()[-1].version
    assert result.exit_code == 0
    assert f"at version {latest}" in result.output
    assert runner.invoke(main, ["db", "current", "--db", db]).output.strip() == str(latest)
