"""Claims that contradict each other (issue 28): two results citing the same study, period, base, weight
and source, stating different values for the same cell, are found by `conflicting-claims`; rounding,
row order, a percent beside a fraction, another base and a result resting on two citations are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver.archive import Archive
from tests.transcripts import CITATIONS_MT, citation, jsonrpc_result, v1_task


def cited(task_id: str, data: dict, *citations: dict) -> dict:
    parts = [{"data": data}] + [{"data": c, "mediaType": CITATIONS_MT} for c in citations or (citation(),)]
    return jsonrpc_result(v1_task(task_id, parts))


def rows(*shares: tuple[str, float]) -> dict:
    return {"rows": [{"label": label, "share": share} for label, share in shares], "total": 4210}


def conflicts(archive: Archive) -> list[tuple[str, str | None, str]]:
    report = archive.audit()
    return sorted(
        (f.task_id, f.reference and f.reference.rsplit("/", 1)[-1], f.detail)
        for f in report.findings
        if f.rule == "conflicting-claims"
    )


@pytest.mark.slow
def test_planted_conflicts_are_found_and_nothing_else(archive, write):
    other_base = citation(base={"name": "Women 18-74", "n": 2100})
    other_source = citation(source={"table": "versant_flat", "column": "s9", "function": "extractShare"})
    write("a.jsonl", [cited("t-a", rows(("18-34", 0.42), ("35-54", 0.37)))])
    write("b.jsonl", [cited("t-b", rows(("35-54", 0.37), ("18-34", 0.52)))])  # rows in another order
    write("c.jsonl", [cited("t-c", rows(("18-34", 0.4213), ("35-54", 0.374)))])  # rounds to t-a's
    write("d.jsonl", [cited("t-d", rows(("18-34", 42), ("35-54", 37)))])  # percent, not fraction
    write("e.jsonl", [cited("t-e", rows(("18-34", 0.61)), other_base)])  # another base
    write("f.jsonl", [cited("t-f", rows(("18-34", 0.9)), citation(), other_source)])  # two citations
    write("g.jsonl", [cited("t-g", {"rows": [{"share": 0.1}, {"share": 0.2}]})])  # rows without labels
    write("h.jsonl", [cited("t-h", {"total": 4211})])
    archive.ingest([str(Path(archive.path).parent / "in")])
    source = 'both citing "Versant Mega Tracker", "W6 (April 2026)", extractFunnel(versant_flat, s14r5) on base '
    source += '"Adults 18-74, aware of brand"'
    assert conflicts(archive) == [
        ("t-a", "b.jsonl", f'task t-a claims "18-34: share" = 0.42 where task t-b claims 0.52, {source}'),
        ("t-a", "h.jsonl", f'task t-a claims "total" = 4210 where task t-h claims 4211, {source}'),
        ("t-b", "a.jsonl", f'task t-b claims "18-34: share" = 0.52 where task t-a claims 0.42, {source}'),
        ("t-b", "h.jsonl", f'task t-b claims "total" = 4210 where task t-h claims 4211, {source}'),
        ("t-c", "b.jsonl", f'task t-c claims "18-34: share" = 0.4213 where task t-b claims 0.52, {source}'),
        ("t-c", "h.jsonl", f'task t-c claims "total" = 4210 where task t-h claims 4211, {source}'),
        ("t-d", "b.jsonl", f'task t-d claims "18-34: share" = 42 where task t-b claims 0.52, {source}'),
        ("t-d", "h.jsonl", f'task t-d claims "total" = 4210 where task t-h claims 4211, {source}'),
        ("t-h", "a.jsonl", f'task t-h claims "total" = 4211 where task t-a claims 4210, {source}'),
    ]


@pytest.mark.slow
def test_numbers_stated_in_strings_conflict_as_their_numbers(archive, write):
    """A string stating a number is a claim in its cell ("35%" beside 0.52), rounded as written ("$3.5m"
    agrees with 3,512,000, "$3.6m" does not), a percent the fraction it is ("35%" beside "0.35"), and is no
    label of its row."""
    write("a.jsonl", [cited("t-a", {"rows": [{"label": "18-34", "share": "35%"}], "spend": "$3.5m"})])
    write("b.jsonl", [cited("t-b", {"rows": [{"label": "18-34", "share": 0.52}], "spend": 3512000})])
    write("c.jsonl", [cited("t-c", {"rows": [{"label": "18-34", "share": "0.35"}], "spend": "$3.6m"})])
    archive.ingest([str(Path(archive.path).parent / "in")])
    source = 'both citing "Versant Mega Tracker", "W6 (April 2026)", extractFunnel(versant_flat, s14r5) on base '
    source += '"Adults 18-74, aware of brand"'
    assert conflicts(archive) == [
        ("t-a", "b.jsonl", f'task t-a claims "18-34: share" = 35% where task t-b claims 0.52, {source}'),
        ("t-a", "c.jsonl", f'task t-a claims "spend" = $3.5m where task t-c claims $3.6m, {source}'),
        ("t-b", "c.jsonl", f'task t-b claims "18-34: share" = 0.52 where task t-c claims 0.35, {source}'),
        ("t-b", "c.jsonl", f'task t-b claims "spend" = 3512000 where task t-c claims $3.6m, {source}'),
        ("t-c", "a.jsonl", f'task t-c claims "spend" = $3.6m where task t-a claims $3.5m, {source}'),
        ("t-c", "b.jsonl", f'task t-c claims "18-34: share" = 0.35 where task t-b claims 0.52, {source}'),
    ]


@pytest.mark.slow
def test_the_samples_hold_no_conflict(samples_copy):
    with Archive.open(samples_copy, read_only=True) as archive:
        assert conflicts(archive) == []


@pytest.mark.slow
def test_the_column_page_shows_where_agents_disagree(archive, write):
    from starlette.testclient import TestClient

    from archiver.serve import create_app

    write("a.jsonl", [cited("t-a", rows(("18-34", 0.42)))])
    write("b.jsonl", [cited("t-b", rows(("18-34", 0.52)))])
    s9 = citation(source={"table": "t", "column": "s9", "function": "f"})
    write("c.jsonl", [cited("t-c", rows(("18-34", 0.42)), s9)])
    archive.ingest([str(Path(archive.path).parent / "in")])
    archive.close()
    with TestClient(create_app(archive.path), base_url="http://localhost") as client:
        twin = client.get("/column/s14r5.json").json()["conflicts"]["rows"]
        assert [(row["task_id"], row["detail"].split(", both")[0]) for row in twin] == [
            ("t-a", 'task t-a claims "18-34: share" = 0.42 where task t-b claims 0.52'),
            ("t-b", 'task t-b claims "18-34: share" = 0.52 where task t-a claims 0.42'),
        ]
        page = client.get("/column/s14r5").text
        assert "Where agents disagree" in page
        assert "2 claims about this column" in page
        assert '<a href="/result/t-a#part-0">t-a</a>' in page  # the claim's Part in its result
        assert "No two results disagree about this column." in client.get("/column/s9").text


@pytest.mark.parametrize("batch", [1, 200_000])
def test_a_filtered_audit_reports_the_conflicts_of_its_copies_against_every_result(batch, archive, write, monkeypatch):
    """A filtered audit judges only the copies in scope, each against every result of its quantity, in scope or
    not: its conflicting-claims findings are the unfiltered audit's of those copies; a quantity without a copy in
    scope gives none (and is not worked out: at 10M claims that took 15.5 s of a filtered audit). Derived a
    quantity at a time (a batch of one result's quantities) or all at once, the findings are the same."""
    import archiver.audit.derive

    monkeypatch.setattr(archiver.audit.derive, "DERIVED_CONFLICT_RESULTS", batch)
    other_base = citation(base={"name": "Women 18-74", "n": 2100})
    write("a.jsonl", [cited("t-a", rows(("18-34", 0.42)))])
    write("b.jsonl", [cited("t-b", rows(("18-34", 0.52)))])
    write("e.jsonl", [cited("t-e", rows(("18-34", 0.61)), other_base)])
    write("f.jsonl", [cited("t-f", rows(("18-34", 0.11)), other_base)])
    archive.ingest([str(Path(archive.path).parent / "in")])
    every = conflicts(archive)
    assert [(task, other) for task, other, _ in every] == [
        ("t-a", "b.jsonl"), ("t-b", "a.jsonl"), ("t-e", "f.jsonl"), ("t-f", "e.jsonl")
    ]  # fmt: skip
    for task in ("t-a", "t-e"):
        report = archive.audit(task=task)
        found = sorted((f.task_id, f.reference.rsplit("/", 1)[-1], f.detail)
                       for f in report.findings if f.rule == "conflicting-claims")  # fmt: skip
        assert found == [finding for finding in every if finding[0] == task]
