"""The cited cells kept with the claim index (`archiver.store.cells`, issue 40): after every write to the index they
are its aggregate (`cells.DIFFERING` finds none), the least and greatest number too when a write removes the claim
that held them; serve's subject pages read them and say what the same aggregate of `claim_citations` says; while
results are pending they read that instead; `db check` finds a kept row changed behind the writer's back and `db
repair` makes it again; an archive of schema 18 makes them as it is upgraded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from archiver.archive import Archive
from archiver.query import lineage
from archiver.query.selection import Selection
from archiver.serve import data
from archiver.serve.tables import FACETS
from archiver.store import cells, kept
from archiver.store.migrations import latest_version
from archiver.store.tables import CITED_CELLS
from tests.test_audit_kept import db_command
from tests.test_claim_index import CARD, exact, task_file
from tests.test_migrations import first_version_archive
from tests.transcripts import SAMPLES


def cells_exact(con) -> int:
    """Assert the kept cells are their definition over the claim index; how many there are."""
    assert con.execute(cells.DIFFERING).fetchall() == []
    return con.execute(f"SELECT count(*) FROM {CITED_CELLS}").fetchone()[0]


def derived(monkeypatch) -> None:
    """Make serve's readers aggregate `claim_citations` at read time, as they do while results are pending."""
    monkeypatch.setattr(cells, "source", lambda con: f"({cells.cells(relation='claim_citations')})")


SUBJECTS = (
    ("study", "Versant Mega Tracker"),
    ("period", "W6 (April 2026)"),
    ("column", "s14r5"),
    ("table", "versant_flat"),
    ("agent", "Versant*"),
)


@pytest.fixture(scope="module")
def samples(samples_copy: str) -> Path:
    """The samples' archive (`conftest.samples_copy`: ingested once a run), this file's own copy."""
    return Path(samples_copy)


def pages(db: Path, kind: str, name: str) -> tuple:
    with Archive.open(str(db), read_only=True) as archive:
        selection = Selection.of(**{kind: [name]})
        return data.by_period(archive.con, selection), data.cited_values(archive.con, selection)


@pytest.mark.parametrize(("kind", "name"), SUBJECTS)
def test_a_subject_page_reads_the_kept_cells_as_the_index_aggregates_them(samples, monkeypatch, kind, name):
    with Archive.open(str(samples), read_only=True) as archive:
        assert cells_exact(archive.con) > 50
    periods, (values, partial) = pages(samples, kind, name)
    assert periods
    assert values
    assert not partial
    derived(monkeypatch)
    periods_derived, (values_derived, _) = pages(samples, kind, name)
    assert periods == periods_derived
    assert [{**row, "mean": pytest.approx(row["mean"])} for row in values] == values_derived


SEARCHES = (
    {"column": ["s14r5"]},
    {"study": ["Versant Mega Tracker"], "agent": ["Versant*"]},
    {"period": ["W6*"], "valid": True},
    {"table": ["versant_flat", "*"], "max_n": 400.0},
    {"function": ["*"], "inferred": False, "min_n": 0.0},
    {"valid": False},
    {"column": ["no such column"]},
)


def search_page(db: Path, filters: dict, counted: bool, page: int = 1) -> data.Page:
    """A search page of claims (`serve.data.lineage_page`): its count and facets summed from the cited cells, or
    (`counted`) counted over its rows."""
    with Archive.open(str(db), read_only=True) as archive:
        query = lineage.claims(Selection.of(**filters))
        assert query.weighted is not None
        if counted:
            return data.paged(archive.con, query.sql, query.params, query.fields, page, 5, FACETS["claims"])
        return data.lineage_page(archive.con, "claims", Selection.of(**filters), None, page, 5, FACETS["claims"])


@pytest.mark.parametrize("filters", SEARCHES)
def test_a_search_by_a_citations_fields_counts_and_facets_its_claims_from_the_kept_cells(samples, filters):
    """Issue 40: a column's page at 100M claims counted and faceted its 2.2M claims over the claim index (7 s);
    chosen by a citation's fields (and the agent), the count and facets are sums over the kept cells, and equal
    what counting the rows says, to the last facet value and the rows without one."""
    summed = search_page(samples, filters, counted=False, page=2)
    assert summed == search_page(samples, filters, counted=True, page=2)
    if filters != {"column": ["no such column"]}:
        assert summed.total > 5
        assert all(facet.values for facet in summed.facets.values())


@pytest.mark.parametrize(
    "filters", [{"task": ["t-1"], "column": ["x"]}, {"since": "2026-01-01", "study": ["s"]}, {"agent": ["a"]},
                {"weight": ["w"], "study": ["s"]}, {"has_warnings": True}, {"source": ["x"], "column": ["c"]}, {}],
)  # fmt: skip
def test_a_search_the_kept_cells_cannot_answer_is_counted_over_its_rows(filters):
    """A task, a time, a file, a weight or warnings are no cell's; an agent alone chooses uncited claims too."""
    assert lineage.claims(Selection.of(**filters)).weighted is None


@pytest.mark.slow
def test_a_search_while_results_are_pending_sums_the_same_cells_from_the_claims(samples, monkeypatch):
    derived(monkeypatch)
    for filters in SEARCHES:
        assert search_page(samples, filters, counted=False) == search_page(samples, filters, counted=True)


def test_a_write_that_removes_the_least_and_greatest_number_makes_them_again(tmp_path):
    """A card ingested later names the agent of its folder's result: that result's claims leave the rows of no
    agent, which held their least and greatest number only through it; those rows are made again from the index."""
    db = tmp_path / "a.duckdb"
    task_file(tmp_path / "agent" / "tasks.jsonl", "t-1", 0.1)
    task_file(tmp_path / "other" / "tasks.jsonl", "t-2", 0.5)
    task_file(tmp_path / "third" / "tasks.jsonl", "t-3", 0.9)
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / name) for name in ("agent", "other", "third")])
        spans = archive.con.execute(f"SELECT agent, low, high, claims FROM {CITED_CELLS}").fetchall()
    assert spans == [(None, 0.1, 0.9, 3)]
    (tmp_path / "agent" / "card.json").write_text(json.dumps(CARD))
    with Archive.open(str(db)) as archive:
        archive.ingest([str(tmp_path / "agent")])
        spans = archive.con.execute(f"SELECT agent, low, high, claims FROM {CITED_CELLS} ORDER BY ALL").fetchall()
        assert cells_exact(archive.con) == 2
    assert spans == [("Panel Agent", 0.1, 0.1, 1), (None, 0.5, 0.9, 2)]
    (tmp_path / "third" / "card.json").write_text(json.dumps({**CARD, "name": "Third Agent"}))
    with Archive.open(str(db)) as archive:  # t-3's 0.9 was the greatest
        archive.ingest([str(tmp_path / "third")])
        spans = archive.con.execute(f"SELECT agent, low, high, claims FROM {CITED_CELLS} ORDER BY ALL").fetchall()
    assert spans == [("Panel Agent", 0.1, 0.1, 1), ("Third Agent", 0.9, 0.9, 1), (None, 0.5, 0.5, 1)]
    exact(db)


@pytest.mark.slow
def test_pending_results_are_read_from_the_definition(samples, tmp_path, monkeypatch):
    """An ingest whose refresh has not run leaves the claim index behind its copies: the subject pages then say
    what the refreshed index will."""
    db = tmp_path / "a.duckdb"
    with Archive.open(str(db)) as archive:
        archive.ingest([str(SAMPLES / "versant-insights")])
    with monkeypatch.context() as patched:
        patched.setattr(kept, "refresh", lambda con, on_batch=None, batch=None: 0)
        with Archive.open(str(db)) as archive:
            archive.ingest([str(SAMPLES)])
            assert kept.pending(archive.con) > 0
    for kind, name in SUBJECTS:
        assert pages(db, kind, name) == pages(samples, kind, name)


@pytest.mark.slow
def test_db_check_finds_a_kept_cell_that_is_not_its_definition_and_repair_makes_it_again(samples, tmp_path):
    db = tmp_path / "a.duckdb"
    shutil.copy(samples, db)
    with Archive.open(str(db)) as archive:
        least = f"(SELECT min(cell) FROM {CITED_CELLS} WHERE valued > 0)"
        archive.con.execute(f"UPDATE {CITED_CELLS} SET high = high + 1 WHERE valued > 0 AND cell = {least}")
    checked = db_command(db, "check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "cited-cells" in checked.stderr
    assert "differs" in checked.stderr
    repaired = db_command(db, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert db_command(db, "check").returncode == 0


@pytest.mark.slow
def test_an_archive_of_schema_18_makes_its_cited_cells_when_it_is_upgraded(samples, tmp_path):
    db = tmp_path / "old.duckdb"
    first_version_archive(str(db), str(SAMPLES), tmp_path, version=18)
    upgraded = db_command(db, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    with Archive.open(str(db), read_only=True) as archive:
        assert archive.version() == latest_version()
        assert cells_exact(archive.con) > 50
    for kind, name in SUBJECTS:
        assert pages(db, kind, name) == pages(samples, kind, name)
