"""The audit kept by the writes that change it (`archiver.audit.kept`, issue 40) is, after every write, what its
definition (every rule run over the whole archive: `audited(..., derive=True)`) computes; an unfiltered audit reads
it, a result still pending is derived from its copies, so an answer never depends on whether a refresh ran; `db
check` finds a kept row that is not its definition and `db repair` makes it again."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.audit import RULES
from archiver.audit import kept as audit_kept
from archiver.audit.run import audited
from archiver.query.selection import Selection
from archiver.store import audit_sums, kept, migrations
from archiver.store.tables import (
    AUDIT_FINDINGS,
    AUDIT_PENDING,
    AUDIT_QUANTITIES,
    AUDIT_QUANTITIES_PENDING,
    AUDIT_STATUS,
)
from tests.test_migrations import first_version_archive
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

STATUS = ", ".join(audit_kept.STATUS_FIELDS)


def audit_of(con, derive: bool, min_base: float = 30, selection: Selection | None = None) -> tuple:
    """An audit's findings (every field, line and reference too), summary and per-result status."""
    with audited(con, list(RULES), selection, min_base, derive=derive) as audit:
        status = con.execute(f"SELECT {STATUS} FROM audit_result_status ORDER BY ALL").fetchall()
        return [dataclasses.astuple(f) for f in audit.findings()], audit.summary, status


def db_command(db: Path | str, *args: str) -> subprocess.CompletedProcess:
    """`archiver db ARGS --db DB`, its output captured."""
    return subprocess.run([sys.executable, "-m", "archiver", "db", *args, "--db", str(db)], capture_output=True,
                          text=True)  # fmt: skip


def audit_exact(con) -> int:
    """Assert the audit is kept: nothing pending, no kept row differing from its definition, and an unfiltered
    audit reading the kept rows equal to one deriving everything. The findings kept."""
    assert kept.pending(con, AUDIT_PENDING) == 0
    assert audit_kept.differing(con) == []
    assert con.execute(audit_sums.DIFFERING).fetchall() == []
    read, derived = audit_of(con, derive=False), audit_of(con, derive=True)
    assert read[0] == derived[0]
    assert read[1] == derived[1]
    assert read[2] == derived[2]
    assert con.execute(f"SELECT {STATUS} FROM {AUDIT_STATUS} ORDER BY ALL").fetchall() == derived[2]
    return con.execute(f"SELECT count(*) FROM {AUDIT_FINDINGS}").fetchone()[0]


@pytest.fixture(scope="module")
def samples(samples_copy: str) -> Path:
    """The samples' archive (`conftest.samples_copy`: ingested once a run), this file's own copy."""
    return Path(samples_copy)


def test_after_ingesting_the_samples_the_kept_audit_is_its_definition(samples):
    with Archive.open(str(samples), read_only=True) as archive:
        assert audit_exact(archive.con) > 20
        rules = {rule for (rule,) in archive.con.execute(f"SELECT DISTINCT rule FROM {AUDIT_FINDINGS}").fetchall()}
    assert set(audit_kept.KEPT_RULES) - rules == {"undecoded-part", "conflicting-claims"}


def test_another_minimum_base_and_filters_are_derived_as_before(samples):
    with Archive.open(str(samples), read_only=True) as archive:
        for min_base in (5, 30, 1000):
            assert audit_of(archive.con, False, min_base)[:2] == audit_of(archive.con, True, min_base)[:2]
        small = [f for f in audit_of(archive.con, False, 1000)[0] if f[0] == "small-base"]
        kept_small = archive.con.execute(f"SELECT count(*) FROM {AUDIT_FINDINGS} WHERE rule = 'small-base'")
        assert len(small) > kept_small.fetchone()[0]  # at 1000 more bases are small than the kept default's
        agent = Selection.of(agent="Meridian*")
        assert audit_of(archive.con, False, selection=agent)[:2] == audit_of(archive.con, True, selection=agent)[:2]


def test_a_pending_result_is_derived_whatever_its_kept_rows_say(samples, tmp_path):
    """A write marks a result pending in its own transaction and the refresh comes after: until then the audit
    derives the pending result's rows, and takes none of its stale kept ones."""
    db = tmp_path / "a.duckdb"
    db.write_bytes(samples.read_bytes())
    with Archive.open(str(db)) as archive:
        before = audit_of(archive.con, derive=False)
        con = archive.con
        (key,) = con.execute(f"SELECT result_key FROM {AUDIT_FINDINGS} ORDER BY ALL LIMIT 1").fetchone()
        con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE result_key = ?", [key])
        con.execute(f"UPDATE {AUDIT_STATUS} SET quantitative = NOT quantitative, agent = 'stale'")
        audit_sums.rebuild(con)  # the statuses' sums as stale as they are (every write to them changes both)
        con.execute(f"INSERT INTO {AUDIT_FINDINGS} SELECT * REPLACE ('stale' AS detail) FROM {AUDIT_FINDINGS}")
        con.execute(f"INSERT INTO {AUDIT_PENDING} SELECT DISTINCT result_key FROM results")
        assert audit_of(con, derive=False) == before
        assert audit_kept.refresh(con) == before[1]["results"]
        audit_exact(con)


CORRUPTED = {
    "kept-audit": f"UPDATE {AUDIT_FINDINGS} SET severity = 'warning' WHERE rule = 'uncited-result'",
    "audit-sums": "UPDATE audit_summary_kept SET validly_cited_results = validly_cited_results + 1 WHERE kind = "
    "'agent' AND name = (SELECT min(name) FROM audit_summary_kept WHERE kind = 'agent')",
}
"""A kept audit row that is not its definition, a kept sum that is not the kept statuses': what `db check` names."""


@pytest.mark.slow
@pytest.mark.parametrize("check", CORRUPTED)
def test_db_check_finds_a_kept_row_or_sum_unlike_its_definition_and_repair_makes_it_again(check, samples, tmp_path):
    db = tmp_path / "a.duckdb"
    db.write_bytes(samples.read_bytes())
    with Archive.open(str(db)) as archive:
        archive.con.execute(CORRUPTED[check])
    checked = db_command(db, "check")
    assert checked.returncode == 1
    assert f"problem: {check}: " in checked.stderr
    assert db_command(db, "repair").returncode == 0
    assert db_command(db, "check").returncode == 0
    with Archive.open(str(db), read_only=True) as archive:
        audit_exact(archive.con)


@pytest.mark.slow
def test_an_archive_of_schema_15_builds_its_kept_audit_when_it_is_upgraded(tmp_path):
    """`db upgrade` says each batch of results it makes (at 10M claims the kept audit takes 43 s); an open
    that upgrades makes them too."""
    db, opened = tmp_path / "old.duckdb", tmp_path / "opened.duckdb"
    first_version_archive(str(db), str(SAMPLES / "versant-insights"), tmp_path, version=15)
    opened.write_bytes(db.read_bytes())
    upgraded = db_command(db, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    with Archive.open(str(db), read_only=True) as archive:
        results = archive.con.execute("SELECT count(DISTINCT result_key) FROM results").fetchone()[0]
        assert audit_exact(archive.con) > 0
    applying = [f"applying {m.version:04d}_{m.name}" for m in migrations.available() if m.version > 15]
    made = [f"the kept {what}: {results:,} of {results:,} results made" for what in ("counts", "audit")]
    assert upgraded.stderr.splitlines() == applying + made
    with Archive.open(str(opened)) as archive:
        assert archive.version() >= 16
        assert audit_exact(archive.con) > 0


def test_the_audit_command_reads_the_kept_rows_and_a_filtered_one_derives(samples, tmp_path):
    """`archiver audit` unfiltered says what the derived audit says, and says it from the kept rows: a kept row
    changed by hand (no write marked its result pending) is what it prints; a filtered audit derives every rule."""
    db = tmp_path / "a.duckdb"
    db.write_bytes(samples.read_bytes())

    def published(*filters: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "archiver", "audit", "--db", str(db), "--format", "json", "--fail-on", "never",
             *filters], capture_output=True, text=True, check=True)  # fmt: skip
        return json.loads(done.stdout)

    with Archive.open(str(db), read_only=True) as archive:
        findings, summary, _status = audit_of(archive.con, derive=True)
    read = published()
    assert [f["detail"] for f in read["findings"]] == [f[10] for f in findings]
    assert read["summary"]["findings"] == summary["findings"]
    with Archive.open(str(db)) as archive:
        archive.con.execute(f"UPDATE {AUDIT_FINDINGS} SET detail = 'as kept' WHERE rule = 'uncited-result'")
    uncited = summary["findings"]["uncited-result"]
    assert [f["detail"] for f in published()["findings"]].count("as kept") == uncited > 0
    assert "as kept" not in [f["detail"] for f in published("--agent", "*")["findings"]]


def cited_task(path: Path, task_id: str, share: float, **citation) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    task = v1_task(task_id, v1_cited_parts({"share": share}, **citation))
    path.write_text(json.dumps(jsonrpc_result({"task": task})))
    return str(path)


def conflicts(con) -> list[str]:
    """The tasks each kept conflicting-claims finding is about, and the value it says the other claims."""
    return [
        f"{task}: {detail.rsplit(' claims ', 1)[1].split(',')[0]}"
        for task, detail in con.execute(
            f"SELECT task_id, detail FROM {AUDIT_FINDINGS} WHERE rule = 'conflicting-claims' ORDER BY 1"
        ).fetchall()
    ]


def test_conflicting_claims_are_kept_a_quantity_at_a_time(tmp_path):
    """A result's conflicting-claims finding depends on the other results of its quantity: a write that adds a
    result to a quantity, or takes one out of it (a second copy citing something else), makes the findings of
    every result of that quantity again, those the write did not touch too."""
    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([cited_task(tmp_path / "a.jsonl", "t-1", 0.30)])
        audit_exact(archive.con)
        assert conflicts(archive.con) == []
        archive.ingest([cited_task(tmp_path / "b.jsonl", "t-2", 0.50)])  # t-1 untouched, and now in conflict
        audit_exact(archive.con)
        assert conflicts(archive.con) == ["t-1: 0.5", "t-2: 0.3"]
        archive.ingest([cited_task(tmp_path / "c.jsonl", "t-3", 0.4)])
        audit_exact(archive.con)
        assert conflicts(archive.con) == ["t-1: 0.5", "t-2: 0.3", "t-3: 0.3"]
        archive.ingest([cited_task(tmp_path / "d.jsonl", "t-2", 0.50, study="Another Study")])  # t-2: two citations
        audit_exact(archive.con)
        assert conflicts(archive.con) == ["t-1: 0.4", "t-3: 0.3"]
        con = archive.con  # a quantity pending, its kept findings gone: the audit derives them
        con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE rule = 'conflicting-claims'")
        con.execute(f"INSERT INTO {AUDIT_QUANTITIES_PENDING} SELECT DISTINCT quantity FROM {AUDIT_QUANTITIES}")
        assert [f[-3] for f in audit_of(con, False)[0] if f[0] == "conflicting-claims"] == [
            'task t-1 claims "share" = 0.3 where task t-3 claims 0.4, both citing "Versant Mega Tracker", '
            '"W6 (April 2026)", extractFunnel(versant_flat, s14r5) on base "Adults 18-74, aware of brand"',
            'task t-3 claims "share" = 0.4 where task t-1 claims 0.3, both citing "Versant Mega Tracker", '
            '"W6 (April 2026)", extractFunnel(versant_flat, s14r5) on base "Adults 18-74, aware of brand"',
        ]
        assert audit_kept.differing(con) == []  # a pending quantity's results are not judged by their kept rows
        audit_kept.refresh(con)
        audit_exact(con)
        assert conflicts(con) == ["t-1: 0.4", "t-3: 0.3"]
        con.execute(f"UPDATE {AUDIT_FINDINGS} SET detail = 'stale' WHERE task_id = 't-3'")
        (stale,) = con.execute("SELECT result_key FROM results WHERE task_id = 't-3'").fetchone()
        assert audit_kept.differing(con) == [stale]


@pytest.mark.parametrize("results", [1, 10**9])
def test_pending_quantities_are_made_in_batches_of_about_conflict_results(results, tmp_path, monkeypatch):
    """A batch of conflicting-claims holds about `CONFLICT_RESULTS` results' quantities, whole (at least one): at one
    result, a batch a quantity; at a billion, every pending quantity in one. Either way the findings are the
    definition's."""
    monkeypatch.setattr(audit_kept, "CONFLICT_RESULTS", results)
    batches = []
    made = audit_kept._make_conflicts
    monkeypatch.setattr(audit_kept, "_make_conflicts", lambda con, chosen: (batches.append(chosen), made(con, chosen)))
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        archive.ingest([cited_task(tmp_path / f"{study}-{share}.jsonl", f"t-{study}-{share}", share, study=study)
                        for study in ("A", "B", "C") for share in (0.25, 0.75)])  # fmt: skip
        assert len(batches) == (3 if results == 1 else 1)
        con = archive.con
        audit_exact(con)
        assert len(conflicts(con)) == 6
        batches.clear()
        con.execute(f"DELETE FROM {AUDIT_FINDINGS} WHERE rule = 'conflicting-claims'")
        con.execute(f"INSERT INTO {AUDIT_QUANTITIES_PENDING} SELECT DISTINCT quantity FROM {AUDIT_QUANTITIES}")
        audit_kept.refresh(con)
        assert len(batches) == (3 if results == 1 else 1)
        audit_exact(con)
        assert len(conflicts(con)) == 6


def test_a_result_of_several_agents_studies_and_copies_is_summed_as_derived(tmp_path):
    """The summary's kept sums (`store.audit_sums`) count a result once under each agent of its copies and each
    study its citations name, and its claims once however many copies hold them, as deriving every count does: a
    second copy from another agent's folder citing another study, then a third from a folder without a card."""

    def copy(folder: str, card: str | None, claims: dict, **citation) -> str:
        (tmp_path / folder).mkdir()
        if card:
            from tests.test_claim_index import CARD  # which imports this file's helpers

            (tmp_path / folder / "card.json").write_text(json.dumps({**CARD, "name": card}))
        task = v1_task("t-1", v1_cited_parts(claims, **citation))
        task["status"]["timestamp"] = f"2026-04-2{len(folder)}T09:00:00Z"  # each file's own bytes
        (tmp_path / folder / "tasks.json").write_text(json.dumps(jsonrpc_result({"task": task})))
        return str(tmp_path / folder)

    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([copy("a", "Agent A", {"share": 0.3})])
        archive.ingest([cited_task(tmp_path / "other.json", "t-2", 0.5)])
        audit_exact(archive.con)
        archive.ingest([copy("b", "Agent B", {"share": 0.3, "other": 0.2}, study="Another Study")])
        audit_exact(archive.con)
        archive.ingest([copy("cc", None, {"share": 0.3})])  # the first copy's Part again: its claim counted once
        audit_exact(archive.con)
        summary = audit_of(archive.con, derive=False)[1]
        kept_several = archive.con.execute(f"SELECT agents, studies, stored, claims FROM {AUDIT_STATUS} "
                                           "WHERE agents IS NOT NULL").fetchall()  # fmt: skip
    assert kept_several == [(["Agent A", "Agent B", None], ["Another Study", "Versant Mega Tracker"], 3, 3)]
    assert [(group["agent"], group["results"]) for group in summary["per_agent"]] == [
        ("Agent A", 1), ("Agent B", 1), (None, 2)
    ]  # fmt: skip
    assert [(group["study"], group["quantitative_results"]) for group in summary["per_study"]] == [
        ("Another Study", 1), ("Versant Mega Tracker", 2)
    ]  # fmt: skip
    assert (summary["results"], summary["copies"], summary["claims"]) == (2, 4, 4)


@pytest.mark.slow
def test_an_archive_of_schema_19_makes_its_summary_sums_when_it_is_upgraded(samples, tmp_path):
    db = tmp_path / "old.duckdb"
    first_version_archive(str(db), str(SAMPLES), tmp_path, version=19)
    with Archive.open(str(db), read_only=True, upgrade=False) as archive:
        several = archive.con.execute(f"SELECT count(*) FROM {AUDIT_STATUS} WHERE stored > 1").fetchone()[0]
    assert several > 0  # their claims are now counted once across copies: made again
    upgraded = db_command(db, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"the kept audit: {several:,} of {several:,} results made" in upgraded.stderr
    with Archive.open(str(db), read_only=True) as archive:
        audit_exact(archive.con)
        upgraded_summary = audit_of(archive.con, derive=False)[1]
    with Archive.open(str(samples), read_only=True) as archive:
        assert upgraded_summary == audit_of(archive.con, derive=False)[1]
