"""`archiver verify`: re-deriving cited numbers from a data layer, verdicts, staleness, and the samples."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.verify import DataLayer, DataLayerError, find_beside
from archiver.verify.compare import ClaimValue, differences
from tests.transcripts import CITATIONS_MT, SAMPLES, citation, jsonrpc_result, v1_task

TABLE = "segment,wt,q1\na,1.0,1\na,3.0,0\nb,2.0,1\nb,2.0,1\n"
WEIGHTED = {"segments": [{"name": "a", "share": 0.25, "n": 2}, {"name": "b", "share": 1.0, "n": 2}], "total": 4}
UNWEIGHTED = {"segments": [{"name": "a", "share": 0.5, "n": 2}, {"name": "b", "share": 1.0, "n": 2}], "total": 4}

EXTRACTORS = '''
import os
import time

__version__ = "1"


def share(relation, column, context):
    weight = f'"{context.weight}"' if context.weight else "1.0"
    rows = relation.query("t", f"""SELECT segment, sum({weight} * ("{column}" = 1)::DOUBLE) / sum({weight}),
                                          count(*) FROM t GROUP BY segment ORDER BY segment""").fetchall()
    return {"segments": [{"name": s, "share": v, "n": n} for s, v, n in rows], "total": sum(r[2] for r in rows)}


def boom(relation, column, context):
    raise ValueError("no such wave in this extract")


def hang(relation, column, context):
    time.sleep(60)


def crash(relation, column, context):
    os._exit(3)
'''

LAYER = """
[verify]
timeout = {timeout}

[[tables]]
name = "t"
path = "t.csv"

[extractors]
share = "extractors.py:share"
boom = "extractors.py:boom"
hang = "extractors.py:hang"
crash = "extractors.py:crash"
"""


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    (tmp_path / "t.csv").write_text(TABLE)
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    path = tmp_path / "archiver-data-layer.toml"  # beside tmp_path/archive.duckdb: found without --data-layer
    path.write_text(LAYER.format(timeout=20))
    return path


def cite(column="q1", function="share", table="t", weight="wt", study="Test Study") -> dict:
    return citation(
        study=study,
        period="P1",
        weight=weight,
        source={"table": table, "column": column, "function": function},
        warnings=None,
    )


def ingest(archive: Archive, write, tasks: dict[str, tuple[dict, dict]]) -> None:
    records = [
        jsonrpc_result({"task": v1_task(task_id, [{"data": data}, {"data": cit, "mediaType": CITATIONS_MT}])}, rpc_id=i)
        for i, (task_id, (data, cit)) in enumerate(tasks.items())
    ]
    archive.ingest([write("verify.jsonl", records)])


def verdicts(report) -> dict[str, tuple[str, str | None]]:
    return {v.task_id: (v.verdict, v.reason) for v in report.verdicts}


def with_share(payload: dict, share: float) -> dict:
    changed = json.loads(json.dumps(payload))
    changed["segments"][0]["share"] = share
    return changed


def test_reproduced_within_the_relative_tolerance(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "exact": (WEIGHTED, cite()),
            "close": (with_share(WEIGHTED, 0.25 * (1 + 1e-12)), cite()),
            "far": (with_share(WEIGHTED, 0.25 * (1 + 1e-6)), cite()),
        },
    )
    found = verdicts(archive.verify())
    assert found["exact"] == ("reproduced", None)
    assert found["close"] == ("reproduced", None)
    assert found["far"][0] == "differs"
    assert "/segments/0/share" in found["far"][1]
    assert verdicts(archive.verify(tolerance=1e-5, task="far"))["far"] == ("reproduced", None)


def test_differs_records_the_pointers_and_both_values(archive, write, layer):
    ingest(archive, write, {"t1": (with_share(WEIGHTED, 0.3), cite())})
    (verdict,) = archive.verify().verdicts
    assert verdict.verdict == "differs"
    assert verdict.claims == 5
    assert verdict.differences == [{"pointer": "/segments/0/share", "claimed": 0.3, "rerun": 0.25}]
    stored = archive.con.execute("SELECT verdict, differences, claims, fingerprint FROM verdicts").fetchall()
    assert [(v, orjson.loads(d), n) for v, d, n, _ in stored] == [("differs", verdict.differences, 5)]


def test_integral_counts_compare_exactly(archive, write, layer):
    near_count = json.loads(json.dumps(WEIGHTED))
    near_count["total"] = 4 + 1e-12  # within any tolerance, but a count is exact
    as_float = json.loads(json.dumps(WEIGHTED))
    as_float["total"] = 4.0  # the 1.x SDKs send every number as a double: 4.0 is the count 4
    ingest(archive, write, {"near": (near_count, cite()), "float": (as_float, cite())})
    found = verdicts(archive.verify(tolerance=1e-3))
    assert found["near"][0] == "differs"
    assert "/total" in found["near"][1]
    assert found["float"] == ("reproduced", None)


def test_comparison_rules():
    claims = [ClaimValue("/n", "2", 2.0), ClaimValue("/share", "0.5", 0.5), ClaimValue("/gone", "1.5", 1.5)]
    found = differences(claims, {"n": 2.000001, "share": 0.5000001, "gone": "x"}, tolerance=1e-3)
    assert [(d["pointer"], d["rerun"]) for d in found] == [("/n", 2.000001), ("/gone", "x")]
    assert differences([ClaimValue("/a~1b/0", "1", 1.0)], {"a/b": [1]}, 1e-9) == []
    assert differences([ClaimValue("/x", "1", 1.0)], {}, 1e-9)[0]["rerun"] is None


def test_weight_handling(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "weighted": (WEIGHTED, cite(weight="wt")),
            "unweighted": (UNWEIGHTED, cite(weight="unweighted")),
            "no-weight-named": (UNWEIGHTED, cite(weight=None)),
            "weighted-claims-unweighted-citation": (WEIGHTED, cite(weight="unweighted")),
            "missing-weight": (WEIGHTED, cite(weight="nope")),
        },
    )
    found = verdicts(archive.verify())
    assert found["weighted"] == found["unweighted"] == found["no-weight-named"] == ("reproduced", None)
    assert found["weighted-claims-unweighted-citation"][0] == "differs"
    assert found["missing-weight"] == ("not-rerunnable", "the table has no weight column 'nope'")


def test_missing_table_column_and_unknown_function(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "table": (WEIGHTED, cite(table="elsewhere")),
            "column": (WEIGHTED, cite(column="q9")),
            "function": (WEIGHTED, cite(function="extractElse")),
            "named-in-transcript": (WEIGHTED, cite(function="os:system")),
            "no-function": (WEIGHTED, cite(function=None)),
        },
    )
    found = verdicts(archive.verify())
    assert found["table"] == (
        "not-rerunnable",
        "the data layer has no table 'elsewhere' for study 'Test Study', period 'P1'",
    )
    assert found["column"] == ("not-rerunnable", "the table has no column 'q9'")
    assert found["function"] == ("not-rerunnable", "the data layer declares no extractor function 'extractElse'")
    assert found["named-in-transcript"] == (
        "not-rerunnable",
        "the data layer declares no extractor function 'os:system'",
    )
    assert found["no-function"] == ("not-rerunnable", "the citation names no source.function")


def test_an_extractor_that_raises_or_crashes_is_reported_and_the_run_goes_on(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "a-boom": (WEIGHTED, cite(function="boom")),
            "b-crash": (WEIGHTED, cite(function="crash")),
            "c-fine": (WEIGHTED, cite()),
        },
    )
    found = verdicts(archive.verify())
    assert found["a-boom"][0] == "not-rerunnable"
    assert found["a-boom"][1].startswith("the extractor raised ValueError: no such wave in this extract")
    assert found["b-crash"] == ("not-rerunnable", "the extractor's process died (exit code 3)")
    assert found["c-fine"] == ("reproduced", None)


def test_an_extractor_that_hangs_is_stopped_at_the_timeout(archive, write, layer):
    layer.write_text(LAYER.format(timeout=1))
    ingest(archive, write, {"a-hang": (WEIGHTED, cite(function="hang")), "b-fine": (WEIGHTED, cite())})
    found = verdicts(archive.verify())
    assert found["a-hang"] == ("not-rerunnable", "the extractor did not finish within 1s and was stopped")
    assert found["b-fine"] == ("reproduced", None)


def test_a_changed_data_layer_makes_earlier_verdicts_visibly_stale(archive, write, layer, tmp_path):
    ingest(archive, write, {"t1": (WEIGHTED, cite()), "t2": (WEIGHTED, cite(function="extractElse"))})
    first = archive.verify()
    assert [v.previous for v in first.verdicts] == [None, None]
    assert [v.stale for v in archive.verdicts().verdicts] == [False, False]

    (tmp_path / "t.csv").write_text(TABLE + "a,1.0,1\n")  # the table was re-delivered with another row
    status = archive.verdicts()
    assert {v.task_id: v.stale for v in status.verdicts} == {"t1": True, "t2": True}
    assert status.stale == 2
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    shown = CliRunner().invoke(main, ["verify", "--status", "--db", db])
    assert shown.exit_code == 0, shown.output  # --fail-on differs: the stored verdicts are reproduced / not run
    assert shown.output.count("STALE") == 3
    assert "2 verdicts rest on a data layer" in shown.output

    again = CliRunner().invoke(main, ["verify", "--db", db, "--format", "json"])
    report = json.loads(again.output)
    assert again.exit_code == 1
    assert report["summary"]["stale"] == 2
    assert [(v["task_id"], v["verdict"], v["previous"], v["previous_stale"]) for v in report["verdicts"]] == [
        ("t1", "differs", "reproduced", True),
        ("t2", "not-rerunnable", "not-rerunnable", True),
    ]
    with Archive.open(db, read_only=True) as reopened:
        assert [v.stale for v in reopened.verdicts().verdicts] == [False, False]
        assert reopened.con.execute("SELECT count(DISTINCT run_id), count(*) FROM verdicts").fetchone() == (2, 4)


def test_verdicts_show_in_query_claims_show_and_audit(archive, write, layer):
    ingest(archive, write, {"t1": (with_share(WEIGHTED, 0.3), cite()), "t2": (WEIGHTED, cite(column="q9"))})
    archive.verify()
    claims = {(r["task_id"], r["pointer"]): (r["verdict"], r["rerun_value"]) for r in archive.claims()}
    assert claims[("t1", "/segments/0/share")] == ("differs", 0.25)
    assert claims[("t1", "/total")] == ("reproduced", None)
    assert claims[("t2", "/total")] == ("not-rerunnable", None)
    text = archive.render("t1")
    assert "   a       0.3  2\n" in text
    assert "     RE-RUN DIFFERS (verified " in text
    assert "\n       share of a: the agent wrote 0.3, the data layer re-derives 0.25\n" in text
    assert "NOT RE-RUNNABLE: the table has no column 'q9'" in archive.render("t2")
    assert "RE-RUN DIFFERS" in archive.render("t1", fmt="html")
    found = {(f.rule, f.task_id, f.severity) for f in archive.audit(rules=["rerun-differs", "not-rerunnable"]).findings}
    assert found == {("rerun-differs", "t1", "error"), ("not-rerunnable", "t2", "warning")}


def test_filters_choose_the_citations_and_studies_outside_the_layer_are_skipped(archive, write, layer):
    layer.write_text(LAYER.format(timeout=20).replace("[verify]", 'studies = ["Test Study"]\n[verify]'))
    ingest(
        archive,
        write,
        {
            "t1": (WEIGHTED, cite()),
            "t2": (WEIGHTED, cite(column="q9")),
            "other": (WEIGHTED, cite(study="Another Study")),
        },
    )
    report = archive.verify(column="q1")
    assert [v.task_id for v in report.verdicts] == ["t1"]
    assert report.skipped == 1
    report = archive.verify()
    assert sorted(v.task_id for v in report.verdicts) == ["t1", "t2"]
    assert report.skipped == 1


def test_the_data_layer_file(tmp_path, layer):
    loaded = DataLayer.load(layer)
    assert loaded.table("t", "any", "any").paths == (str(tmp_path / "t.csv"),)
    assert find_beside(str(tmp_path / "archive.duckdb")) == str(layer)
    (tmp_path / "archive.datalayer.toml").write_text(LAYER.format(timeout=5))
    assert find_beside(str(tmp_path / "archive.duckdb")) == str(tmp_path / "archive.datalayer.toml")
    snapshots = tmp_path / "snap.toml"
    snapshots.write_text(
        textwrap.dedent("""
        [[tables]]
        name = "t"
        path = "all.parquet"
        [[tables]]
        name = "t"
        study = "S"
        period = "W2"
        path = "w2.csv"
        [[tables]]
        name = "db"
        duckdb = "warehouse.duckdb"
        table = "main.sales"
    """)
    )
    snap = DataLayer.load(snapshots)
    assert snap.table("t", "S", "W2").format == "csv"
    assert snap.table("t", "S", "W1").format == "parquet"
    assert snap.table("db", None, None).table == "main.sales"
    assert snap.studies is None
    for bad, message in (
        ("[[tables]]\npath = 'x.csv'", "name is required"),
        ("[[tables]]\nname = 't'\npath = 'x.txt'", "cannot tell the format"),
        ("[extractors]\nf = {function = 'g'}", "module is required"),
        ("tables = [", "archiver-data-layer|snap.toml"),
    ):
        snapshots.write_text(bad)
        with pytest.raises(DataLayerError, match=message):
            DataLayer.load(snapshots)
    with pytest.raises(DataLayerError, match="no data layer"):
        DataLayer.load(tmp_path / "absent.toml")


def test_no_data_layer_is_a_clear_error(tmp_path):
    db = str(tmp_path / "lonely.duckdb")
    Archive.open(db).close()
    result = CliRunner().invoke(main, ["verify", "--db", db])
    assert result.exit_code == 1
    assert "no data layer given and none beside" in result.output


# Over sample_transcripts/: the verify-demo agent's planted outcomes, exactly.

SAMPLE_LAYER = SAMPLES / "data-layer" / "archiver-data-layer.toml"
MANIFEST = orjson.loads((SAMPLES / "manifest.json").read_bytes())


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("verify-samples") / "samples.duckdb")
    with Archive.open(db) as archive:
        assert archive.ingest([str(SAMPLES)]).quarantined == 0
    return db


def test_verify_over_the_samples_reports_exactly_the_planted_outcomes(sample_db):
    result = CliRunner().invoke(
        main, ["verify", "--db", sample_db, "--data-layer", str(SAMPLE_LAYER), "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    studies = {"Verify Demo Tracker"}
    covered = {
        r["key"]
        for r in MANIFEST["results"]
        if any(c["study"] in studies for copy in r["copies"] for c in copy["citations"])
    }
    planted = {
        p["key"]: {"rerun-differs": "differs", "not-rerunnable": "not-rerunnable"}[p["rule"]]
        for p in MANIFEST["planted"]
        if p["rule"] in ("rerun-differs", "not-rerunnable")
    }
    expected = {key: planted.get(key, "reproduced") for key in covered}
    assert {v["result_key"]: v["verdict"] for v in report["verdicts"]} == expected
    assert report["summary"]["skipped_other_studies"] == sum(
        1
        for r in MANIFEST["results"]
        if r["key"] not in covered
        for c in {(c["study"], c["column"]) for copy in r["copies"] for c in copy["citations"]}
    )
    differs = next(v for v in report["verdicts"] if v["verdict"] == "differs")
    assert [d["pointer"] for d in differs["differences"]] == ["/segments/0/share"]
    missing = next(v for v in report["verdicts"] if v["verdict"] == "not-rerunnable")
    assert missing["reason"] == "the table has no column 'purchase_b1'"


def test_the_samples_audit_shows_the_verdicts(sample_db):
    with Archive.open(sample_db) as archive:
        archive.verify(str(SAMPLE_LAYER))
        findings = archive.audit(rules=["rerun-differs", "not-rerunnable"]).findings
    planted = {
        (p["rule"], p["key"], p["path"])
        for p in MANIFEST["planted"]
        if p["rule"] in ("rerun-differs", "not-rerunnable")
    }
    assert {(f.rule, f.result_key, f.source_path.removeprefix(str(SAMPLES) + "/")) for f in findings} == planted
