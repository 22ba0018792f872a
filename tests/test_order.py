"""Findings do not depend on order: the same files ingested in any order and in any grouping, or the same
traffic spooled into segments split anywhere, give the same audit (issue 27: `citation-type-lost` was found
or missed by which segment's name sorted first); and after every ingest of any order the kept claim index and
audit are what their definitions compute (issue 40)."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver.archive import Archive
from archiver.ingest import expand
from archiver.store import cells, counts, kept
from tests.spool_segments import rpc_exchanges, unary_segment
from tests.test_audit_kept import audit_exact
from tests.test_counts_kept import counts_exact
from tests.transcripts import SAMPLES

pytestmark = pytest.mark.slow

SEGMENT = "rec-20261130T174000000000-0a1b2c3d-{:06d}.jsonl"
PLACE = ("rule", "result_key", "task_id", "message_id", "artifact_id", "part_index")


FILES = sorted(Path(source.path) for source in expand([str(SAMPLES)]))
"""The samples' transcripts: what `archiver ingest sample_transcripts/` reads."""


def findings(db: Path, *groups: list[Path]) -> tuple[list[tuple], dict]:
    """The audit of `groups` of files ingested one group after another: every finding with where it stands
    (file name and locator, not the folder), and the summary's counts."""
    with Archive.open(str(db)) as archive:
        for group in groups:
            archive.ingest([str(path) for path in group], workers=1)
            # the claim index kept by each ingest is its definition, whatever came before (`store.kept`)
            assert archive.con.execute(kept.differing()).fetchall() == []
            assert kept.pending(archive.con) == 0
            audit_exact(archive.con)  # and so is the kept audit (`audit.kept`)
            counts_exact(archive.con)  # and the counts (`store.counts`)
            assert archive.con.execute(cells.DIFFERING).fetchall() == []  # and the cited cells (`store.cells`)
        report = archive.audit()
        found = sorted(
            (
                (*(getattr(f, name) for name in PLACE), Path(f.source_path).name, f.locator, f.detail)
                for f in report.findings
            ),
            key=repr,  # a copy dropping Parts of a message and of an artifact has None beside text in one place
        )
        return found, {k: v for k, v in report.summary.items() if "path" not in k}


@pytest.fixture(scope="module")
def at_once(tmp_path_factory) -> tuple[list[tuple], dict]:
    return findings(tmp_path_factory.mktemp("order") / "a.duckdb", FILES)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(FILES), cuts=st.lists(st.integers(1, len(FILES) - 1), max_size=3, unique=True))
def test_the_samples_in_any_order_and_grouping_give_the_same_audit(tmp_path_factory, at_once, order, cuts):
    bounds = [0, *sorted(cuts), len(order)]
    groups = [order[start:end] for start, end in itertools.pairwise(bounds)]
    assert findings(tmp_path_factory.mktemp("order") / "a.duckdb", *groups) == at_once


def exchanges() -> list[dict]:
    """The agent's answers as sent, then again as later calls returned them, some without their citations'
    media type: one origin copy per result, spread over whatever segments hold it."""
    sent = rpc_exchanges("legacy-funnel/rpc-v03.jsonl", "x", "0.3")
    untyped = json.loads(json.dumps(sent).replace('"mediaType"', '"kept"').replace('"mimeType"', '"kept"'))
    again = [{**e, "exchange": f"y-{n}"} for n, e in enumerate(untyped)]
    return sent + again


EXCHANGES = exchanges()


def spooled(spool: Path, cuts: list[int], order: list[int]) -> list[Path]:
    """`EXCHANGES` split at `cuts` into segments, numbered in `order` (which name sorts first)."""
    spool.mkdir(parents=True)
    bounds = [0, *sorted(cuts), len(EXCHANGES)]
    pieces = [EXCHANGES[start:end] for start, end in itertools.pairwise(bounds)]
    named = zip(order, pieces, strict=True)
    return [unary_segment(spool / SEGMENT.format(number + 1), piece) for number, piece in named]


def spool_findings(db: Path, segments: list[Path]) -> tuple[list[tuple], dict]:
    """The findings of the segments ingested in two runs (the first half, the rest), and the counts of what they
    hold, an origin copy counted once however its segments split it (kept: `store.counts`)."""
    with Archive.open(str(db)) as archive:
        half = len(segments) // 2
        for group in (segments[:half], segments[half:]):
            archive.ingest([str(path) for path in group], workers=1)
            held = counts_exact(archive.con)
        found = sorted((*(getattr(f, name) for name in PLACE), f.detail) for f in archive.audit().findings)
        return found, {name: held[name] for name in (*counts.PER_RESULT, *counts.DISTINCT)}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_traffic_spooled_into_segments_split_anywhere_gives_the_same_findings(tmp_path_factory, data):
    cuts = data.draw(st.lists(st.integers(1, len(EXCHANGES) - 1), max_size=4, unique=True), label="cuts")
    order = data.draw(st.permutations(range(len(cuts) + 1)), label="order")
    folder = tmp_path_factory.mktemp("spool")
    whole = spool_findings(folder / "whole.duckdb", spooled(folder / "one", [], [0]))
    assert {f[0] for f in whole[0]} >= {"citation-type-lost", "invalid-citation"}
    assert whole[1]["origin_copies"] > 0
    split = spool_findings(folder / "split.duckdb", spooled(folder / "many", cuts, list(order)))
    assert split == whole
    shutil.rmtree(folder)
