"""Each view is defined once (`archiver.store.views`): the API's lineage queries equal their documented
views, on the samples, on a generated archive and under filters; the views are re-made after an upgrade
and whenever their definitions change."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from archiver.archive import Archive
from archiver.query.lineage import CLAIM_FIELDS, VERDICT_FIELDS
from archiver.query.selection import Selection
from archiver.store import views
from archiver.store.views import CITATION_INDEX_FIELDS
from benchmarks.generate import generate

SAMPLES = Path(__file__).resolve().parent.parent / "sample_transcripts"
CLAIM_COLUMNS = [f for f in CLAIM_FIELDS if f not in (*VERDICT_FIELDS, "status")]  # both from the latest verdicts


@pytest.fixture(scope="module")
def samples(samples_copy):
    with Archive.open(samples_copy, read_only=True) as archive:
        yield archive


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    generate(folder / "dumps", 600, seed=5, tasks_per_file=30)
    path = str(folder / "generated.duckdb")
    with Archive.open(path) as archive:
        archive.ingest([str(folder / "dumps")], workers=1)
    with Archive.open(path, read_only=True) as archive:
        yield archive


def hashable(row) -> tuple:
    """A row as the API gives it: lists as tuples, times in ISO 8601."""
    return tuple(tuple(v) if isinstance(v, list) else v.isoformat() if isinstance(v, datetime) else v for v in row)


def view_rows(archive: Archive, view: str, columns: list[str], filters: dict | None = None) -> Counter:
    where, params = Selection.of(**(filters or {})).where()
    names = ", ".join(f'"{c}"' for c in columns)
    return Counter(map(hashable, archive.con.execute(f"SELECT {names} FROM {view} WHERE {where}", params).fetchall()))


def api_rows(rows, columns: list[str]) -> Counter:
    return Counter(hashable(row[c] for c in columns) for row in rows)


FILTERS = [{}, {"study": "*"}, {"agent": "*a*"}, {"since": "2026-01-01"}, {"valid": False}, {"min_n": 100}]


@pytest.mark.slow
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
@pytest.mark.parametrize("which", ["samples", "generated"])
def test_claims_equal_the_claim_citations_view(which, filters, request):
    archive = request.getfixturevalue(which)
    api = api_rows(archive.claims(**filters), CLAIM_COLUMNS)
    view = view_rows(archive, "claim_citations", CLAIM_COLUMNS, filters)
    assert sum(view.values()) > 0 or filters
    assert api == view


@pytest.mark.slow
@pytest.mark.parametrize("filters", [{}, {"study": "*"}, {"valid": True}, {"max_n": 500}], ids=str)
@pytest.mark.parametrize("which", ["samples", "generated"])
def test_citations_equal_the_citation_index_view(which, filters, request):
    archive = request.getfixturevalue(which)
    columns = list(CITATION_INDEX_FIELDS)
    api = api_rows(archive.citations(**filters), columns)
    if filters:
        where, params = Selection.of(**filters).where("u.")
        sql = f"SELECT {', '.join(columns)} FROM ({views.citation_index(where)})"
        view = Counter(map(hashable, archive.con.execute(sql, params).fetchall()))
    else:
        view = view_rows(archive, "citation_index", columns)
    assert sum(view.values()) > 0
    assert api == view


def test_citation_index_counts_claims_once_per_result(samples):
    """The view's claims column (once dropped by a migration that restated the view) is the number of
    distinct claims of the results resting on each citation."""
    rows = samples.con.execute(
        """SELECT i.citation_hash, i.claims,
                  (SELECT count(DISTINCT (k.result_key, k.content_hash, k.pointer)) FROM claim_citations k
                    WHERE k.citation_hash = i.citation_hash) AS distinct_claims
           FROM citation_index i"""
    ).fetchall()
    assert rows
    assert all(claims == distinct for _, claims, distinct in rows)


def test_every_view_is_made_and_recorded(samples):
    made = {
        name for (name,) in samples.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    }
    assert made == set(views.VIEWS)
    assert samples.con.execute("SELECT fingerprint FROM schema_views").fetchall() == [(views.FINGERPRINT,)]


@pytest.mark.slow
def test_changed_definitions_are_remade_on_open(tmp_path, monkeypatch):
    path = str(tmp_path / "a.duckdb")
    Archive.open(path).close()
    con = duckdb.connect(path)
    con.execute("UPDATE schema_views SET fingerprint = 'an older archiver'")
    con.execute("DROP VIEW claim_lineage")
    con.close()
    with Archive.open(path, read_only=True) as archive:
        assert not views.stale(archive.con)
        assert archive.con.execute("SELECT count(*) FROM claim_lineage").fetchone() == (0,)


@pytest.mark.slow
def test_a_partial_upgrade_makes_no_views_and_the_last_step_makes_them(tmp_path):
    with Archive.open(str(tmp_path / "a.duckdb"), upgrade=False) as archive:
        archive.upgrade(upto=7)
        assert archive.con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (0,)
        archive.upgrade()
        assert not views.stale(archive.con)


@pytest.mark.slow
def test_views_are_remade_after_a_migration_so_a_star_sees_new_columns(tmp_path, monkeypatch):
    """After a migration that adds columns (0009 adds three to `verdicts`), the views show them."""
    with Archive.open(str(tmp_path / "a.duckdb"), upgrade=False) as archive:
        archive.upgrade(upto=8)
        held: dict[str, str] = {}  # the views schema 8 can hold: `results.origin` came with 0010, chunks with 0011
        for name, sql in views.VIEWS.items():
            if (
                "origin" not in sql
                and "chunk" not in sql
                and not any(other in sql for other in views.VIEWS.keys() - held.keys() - {name})
            ):
                held[name] = sql
        with monkeypatch.context() as older:
            older.setattr(views, "VIEWS", held)
            views.create(archive.con)
        before = {d[0] for d in archive.con.execute("SELECT * FROM latest_verdicts LIMIT 0").description}
        archive.upgrade()
        after = {d[0] for d in archive.con.execute("SELECT * FROM latest_verdicts LIMIT 0").description}
    # 0012 adds `coverage` and `inputs` (verify's second round)
    assert after - before == {"rows_used", "comparison", "absolute_tolerance", "coverage", "inputs", "comparison_given"}
