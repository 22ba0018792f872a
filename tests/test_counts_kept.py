"""The archive's counts kept by the writes that change them (`archiver.store.counts`, issue 40) are, after every
write, what their definitions count over the stored copies: `stats` equals `views.STAT_QUERIES`, the overview's
results per day and most cited subjects equal the queries they replaced, the sums equal the results' rows, and
each result's rows its definition's. A result still pending is derived from its copies, so an answer never
depends on whether a refresh ran; `db check` finds a kept count that is not its definition and `db repair` makes
it again; an archive of the previous schema builds them as it upgrades."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.query.output import stream
from archiver.store import counts, views
from archiver.store.migrations import latest_version
from archiver.store.tables import COUNTS, COUNTS_PENDING, RESULT_COUNTS
from tests.test_audit_kept import db_command
from tests.test_migrations import first_version_archive
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

RESULTS_PER_DAY = f"""
SELECT CAST(timestamp AS DATE) AS day, coalesce(agent, '(no agent)') AS agent, count(DISTINCT result_key) AS results
FROM ({views.copies()}) WHERE timestamp IS NOT NULL GROUP BY ALL ORDER BY day, agent"""
"""Results per day and agent over the stored copies: what serve's overview counted before it read the kept sums."""

MOST_CITED = """SELECT {column} AS name, count(DISTINCT result_key) AS results FROM citations
                WHERE {column} IS NOT NULL GROUP BY ALL ORDER BY 2 DESC, 1 LIMIT 30"""
"""The most cited of a subject over the citations: what serve's overview counted before."""


def counts_exact(con) -> dict[str, int]:
    """Assert every kept count is its definition, whatever is pending: `stats` is `STAT_QUERIES`, the overview's
    counts their queries; when nothing is pending, the sums are the results' rows and the rows their definition's.
    The counts."""
    stats = counts.stats(con)
    assert stats == {name: con.execute(sql).fetchone()[0] for name, sql in views.STAT_QUERIES.items()}
    assert [{**row, "day": row["day"].isoformat()} for row in counts.results_per_day(con)] == list(
        stream(con.execute(RESULTS_PER_DAY))
    )
    for kind, column in counts.SUBJECTS.items():
        assert counts.most_cited(con, kind, 30) == list(stream(con.execute(MOST_CITED.format(column=column))))
    current = f"SELECT kind, name, day, n FROM ({counts.current(con)})"
    defined = f"SELECT * FROM ({counts.DEFINITION}) WHERE n <> 0"
    assert con.execute(f"({current} EXCEPT ALL {defined}) UNION ALL ({defined} EXCEPT ALL {current})").fetchall() == []
    if not con.execute(f"SELECT count(*) FROM {COUNTS_PENDING}").fetchone()[0]:
        assert con.execute(counts.SUMS_DIFFERING).fetchall() == []
        assert con.execute(counts.differing()).fetchall() == []
    return stats


@pytest.fixture(scope="module")
def samples(samples_copy: str) -> Path:
    """The samples' archive (`conftest.samples_copy`: ingested once a run), this file's own copy."""
    return Path(samples_copy)


def test_after_ingesting_the_samples_the_counts_are_their_definitions(samples):
    with Archive.open(str(samples), read_only=True) as archive:
        stats = counts_exact(archive.con)
        assert archive.stats() == stats
        assert archive.con.execute(f"SELECT count(*) FROM {COUNTS_PENDING}").fetchone()[0] == 0
        kinds = {kind for (kind,) in archive.con.execute(f"SELECT DISTINCT kind FROM {COUNTS}").fetchall()}
    assert min(stats["results"], stats["tasks"]) > 50
    assert stats["claims"] > 300
    assert {"results", "copies", "parts", "citations", "claims", "tasks", "study", "day"} <= kinds


def _task_file(path: Path, task_id: str, values: dict, study: str = "Kept Counts Study") -> None:
    parts = v1_cited_parts(values, study=study)
    path.write_text(json.dumps(jsonrpc_result(v1_task(task_id, parts))) + "\n")


def test_a_new_version_of_a_file_and_a_refresh_not_yet_run_are_counted_as_defined(tmp_path, monkeypatch):
    db = tmp_path / "a.duckdb"
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    _task_file(first, "t-one", {"visits": 10.0, "spend": 2.0})
    _task_file(second, "t-two", {"visits": 11.0})
    with Archive.open(str(db)) as archive:
        archive.ingest([str(first), str(second)])
        before = counts_exact(archive.con)
    _task_file(first, "t-three", {"visits": 12.0, "spend": 3.0, "share": 0.5}, study="Another Study")
    monkeypatch.setattr(counts, "refresh", lambda con, on_batch=None: 0)  # the counts left pending
    with Archive.open(str(db), upgrade=False) as archive:
        archive.ingest([str(first)])
        pending = archive.con.execute(f"SELECT count(DISTINCT result_key) FROM {COUNTS_PENDING}").fetchone()[0]
        assert pending == 1  # the new version's result (the archive keeps every version's)
        after = counts_exact(archive.con)  # derived where pending
    assert (before["tasks"], after["tasks"]) == (2, 3)
    assert after["claims"] == before["claims"] + 3
    monkeypatch.undo()
    with Archive.open(str(db)) as archive:  # an open that writes refreshes what is pending
        archive.ingest([str(second)])  # nothing new: the refresh still runs
        assert archive.con.execute(f"SELECT count(*) FROM {COUNTS_PENDING}").fetchone()[0] == 0
        assert counts_exact(archive.con) == after
        studies = {row["name"] for row in counts.most_cited(archive.con, "study", 30)}
    assert studies == {"Kept Counts Study", "Another Study"}


@pytest.mark.slow
def test_db_check_finds_a_count_that_is_not_its_definition_and_repair_makes_it_again(samples, tmp_path):
    db = tmp_path / "a.duckdb"
    shutil.copy(samples, db)
    with Archive.open(str(db)) as archive:
        key = archive.con.execute(f"SELECT min(result_key) FROM {RESULT_COUNTS}").fetchone()[0]
        archive.con.execute(f"UPDATE {RESULT_COUNTS} SET n = n + 1 WHERE result_key = ? AND kind = 'parts'", [key])
        archive.con.execute(f"UPDATE {COUNTS} SET n = n + 5 WHERE kind = 'claims'")
    checked = db_command(db, "check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "counts-sum" in checked.stdout + checked.stderr
    repaired = db_command(db, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert db_command(db, "check").returncode == 0
    with Archive.open(str(db), read_only=True) as archive:
        counts_exact(archive.con)


@pytest.mark.slow
def test_an_archive_of_schema_16_builds_its_counts_when_it_is_upgraded(tmp_path):
    db = tmp_path / "old.duckdb"
    first_version_archive(str(db), str(SAMPLES), tmp_path, version=16)
    upgraded = db_command(db, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    with Archive.open(str(db), read_only=True) as archive:
        assert archive.version() == latest_version()
        results = archive.con.execute("SELECT count(DISTINCT result_key) FROM results").fetchone()[0]
        assert counts_exact(archive.con)["results"] == results
    assert f"the kept counts: {results:,} of {results:,} results made" in upgraded.stderr.splitlines()
