"""`archiver verify`: re-deriving cited numbers from a data layer, verdicts, staleness, and the samples."""

from __future__ import annotations

import csv
import io
import json
import textwrap
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.verify import DataLayer, DataLayerError, find_beside
from archiver.verify.compare import AS_ROUNDED, ClaimValue, Comparison, differences
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
        base={"name": "All", "n": 4},  # the table's rows
        fielded=None,  # the table has no date column: a window could not be applied (tests/test_verify_scope.py)
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


@pytest.mark.slow
def test_claims_compare_as_rounded_by_default_and_within_a_tolerance_when_asked(archive, write, layer):
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
    assert found["close"][0] == found["far"][0] == "differs"  # more places than the data gives
    assert "/segments/0/share" in found["far"][1]
    assert verdicts(archive.verify(tolerance=1e-11, task="close"))["close"] == ("reproduced", None)
    assert verdicts(archive.verify(tolerance=1e-5, task="far"))["far"] == ("reproduced", None)


@pytest.mark.slow
def test_differs_records_the_pointers_and_both_values(archive, write, layer):
    ingest(archive, write, {"t1": (with_share(WEIGHTED, 0.35), cite())})
    (verdict,) = archive.verify().verdicts
    assert verdict.verdict == "differs"
    assert verdict.claims == 5
    assert verdict.differences == [{"pointer": "/segments/0/share", "claimed": 0.35, "rerun": 0.25}]
    stored = archive.con.execute("SELECT verdict, differences, claims, fingerprint FROM verdicts").fetchall()
    assert [(v, orjson.loads(d), n) for v, d, n, _ in stored] == [("differs", verdict.differences, 5)]


@pytest.mark.slow
def test_integer_literals_follow_the_same_rule(archive, write, layer):
    near_count = json.loads(json.dumps(WEIGHTED))
    near_count["total"] = 4 + 1e-7  # a JavaScript agent's 4 for 4.0000001 reproduces at tolerance 0.01
    as_float = json.loads(json.dumps(WEIGHTED))
    as_float["total"] = 4.0  # the 1.x SDKs send every number as a double: 4.0 is the count 4
    ingest(archive, write, {"near": (near_count, cite()), "float": (as_float, cite())})
    found = verdicts(archive.verify(tolerance=1e-2))
    assert found == {"near": ("reproduced", None), "float": ("reproduced", None)}


def test_comparison_rules():
    claims = [ClaimValue("/n", "2", 2.0), ClaimValue("/share", "0.5", 0.5), ClaimValue("/gone", "1.5", 1.5)]
    found = differences(claims, {"n": 2.000001, "share": 0.5000001, "gone": "x"}, Comparison(relative=1e-3))
    assert [(d["pointer"], d["rerun"]) for d in found] == [("/gone", "x")]
    assert differences([ClaimValue("/a~1b/0", "1", 1.0)], {"a/b": [1]}) == []
    assert differences([ClaimValue("/x", "1", 1.0)], {})[0]["rerun"] is None


@pytest.mark.parametrize(
    ("literal", "rerun", "comparison", "agrees"),
    [
        ("0.11", 0.1095, AS_ROUNDED, True),
        ("0.01", 0.0149, AS_ROUNDED, True),
        ("0.03", 0.025, AS_ROUNDED, True),  # half-up
        ("0.02", 0.025, AS_ROUNDED, True),  # half-even
        ("0.02", 0.0149, AS_ROUNDED, False),
        ("4", 4.0000001, AS_ROUNDED, True),
        ("1210", 1250, AS_ROUNDED, False),
        ("1.2e3", 1249, AS_ROUNDED, True),
        ("0.2833333333333333", 0.28333333333333327, AS_ROUNDED, True),  # a double in full, summed otherwise
        ("0.2833333333333333", 0.283333333334, AS_ROUNDED, False),
        ("0.01", 0.0149, Comparison(absolute=0.005), True),
        ("0.01", 0.0149, Comparison(relative=0.005), False),
        ("0.11", 0.1095, Comparison(relative=0.005), True),
        ("4", 4.0000001, Comparison(relative=0.01), True),
    ],
)
def test_as_rounded_absolute_and_relative(literal, rerun, comparison, agrees):
    assert comparison.agrees(ClaimValue("", literal, float(literal)), rerun) is agrees


def test_a_scale_mismatch_is_named():
    (found,) = differences([ClaimValue("/share", "0.46", 0.46)], {"share": 45.999})
    assert found["note"] == "scale: claimed as fraction, data gives percent"
    (found,) = differences([ClaimValue("/share", "46", 46.0)], {"share": 0.4601})
    assert found["note"] == "scale: claimed as percent, data gives fraction"
    (found,) = differences([ClaimValue("/share", "0.35", 0.35)], {"share": 0.25})
    assert "note" not in found


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert found["b-crash"] == ("not-rerunnable", "the extractor's process exited with code 3")
    assert found["c-fine"] == ("reproduced", None)


@pytest.mark.slow
def test_an_extractor_that_hangs_is_stopped_at_the_timeout(archive, write, layer):
    layer.write_text(LAYER.format(timeout=1))
    ingest(archive, write, {"a-hang": (WEIGHTED, cite(function="hang")), "b-fine": (WEIGHTED, cite())})
    found = verdicts(archive.verify())
    assert found["a-hang"] == ("not-rerunnable", "the extractor did not finish within 1s and was stopped")
    assert found["b-fine"] == ("reproduced", None)


@pytest.mark.slow
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


@pytest.mark.slow
def test_verdicts_show_in_query_claims_show_and_audit(archive, write, layer):
    ingest(archive, write, {"t1": (with_share(WEIGHTED, 0.35), cite()), "t2": (WEIGHTED, cite(column="q9"))})
    archive.verify()
    claims = {(r["task_id"], r["pointer"]): (r["verdict"], r["rerun_value"]) for r in archive.claims()}
    assert claims[("t1", "/segments/0/share")] == ("differs", 0.25)
    assert claims[("t1", "/total")] == ("reproduced", None)
    assert claims[("t2", "/total")] == ("not-rerunnable", None)
    text = archive.render("t1")
    assert "     RE-RUN DIFFERS, over all rows: 4 (verified" in text
    assert "\n       share of a: the agent wrote 0.35, the data layer re-derives 0.250\n" in text
    assert "NOT RE-RUNNABLE: the table has no column 'q9'" in archive.render("t2")
    assert "RE-RUN DIFFERS" in archive.render("t1", fmt="html")
    found = {(f.rule, f.task_id, f.severity) for f in archive.audit(rules=["rerun-differs", "not-rerunnable"]).findings}
    assert found == {("rerun-differs", "t1", "error"), ("not-rerunnable", "t2", "warning")}


@pytest.mark.slow
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
        ("[[tables]]\nname = 't'\npath = 'x.csv'\nperiod = 'W1'\nperiod_column = 'wave'", "not both"),
        ("[verify]\nabsolute = 0.1\nrelative = 0.1", "give absolute or relative, not both"),
        ("[[tables]]\nname = 't'\npath = 'x.csv'\nabsolute = -1", "must be a non-negative number"),
        ("[[extractors.f]]\nmodule = 'a.py'\n[[extractors.f]]\nmodule = 'b.py'", "two declarations"),
    ):
        snapshots.write_text(bad)
        with pytest.raises(DataLayerError, match=message):
            DataLayer.load(snapshots)
    with pytest.raises(DataLayerError, match="no data layer"):
        DataLayer.load(tmp_path / "absent.toml")


@pytest.mark.slow
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
def sample_db(samples_copy) -> str:
    return samples_copy


@pytest.mark.slow
def test_verify_writes_csv_and_tsv_a_verdict_a_line(sample_db):
    """Issue 41: csv and tsv like every listing."""
    args = ["verify", "--db", sample_db, "--data-layer", str(SAMPLE_LAYER), "--fail-on", "never"]
    verdicts = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)["verdicts"]
    rows = list(csv.DictReader(io.StringIO(CliRunner().invoke(main, [*args, "--csv"]).output)))
    assert [row["result_key"] for row in rows] == [v["result_key"] for v in verdicts]
    assert [row["verdict"] for row in rows] == [v["verdict"] for v in verdicts]
    tsv = CliRunner().invoke(main, [*args, "--tsv"]).output.splitlines()
    assert tsv[0].split("\t") == list(rows[0])
    assert len(tsv) == len(rows) + 1


@pytest.mark.slow
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
    by_task = {v["task_id"]: v for v in report["verdicts"]}
    assert by_task["task-vd-aware-w3"]["rows_used"] == "rows fielded 2026-08-03..2026-08-16: 120 of 140"
    assert by_task["task-vd-consider-w2"]["verdict"] == "reproduced"  # its shares were rounded to two places
    assert by_task["task-vd-consider-w2"]["comparison"].startswith("as rounded")


@pytest.mark.slow
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


# An analyst's data layer: each case of issue 16's "Why", with the verdict and reason it must get.

# 40 pilot rows fielded before the window, then 30 rows inside it; three quarters in one table.
ANALYST_ROWS = (
    "resp_id,fielded_on,quarter,q1\n"
    + "".join(f"P{i},2026-03-20,Q1,1\n" for i in range(40))
    + "".join(f"R{i},2026-04-{2 + i % 18:02d},Q{1 + i % 3},{i % 2}\n" for i in range(30))
)

ANALYST_EXTRACTORS = """
import time

from helpers import SCALE


def count(relation, column, context):
    return {"n": relation.query("t", f'SELECT count(*) FROM t WHERE "{column}" = 1').fetchone()[0]}


def share(relation, column, context):
    return {"share": SCALE * relation.query("t", f'SELECT avg("{column}"::DOUBLE) FROM t').fetchone()[0]}


def window(relation, column, context):
    return {"start": context.fielded_start.isoformat(), "end": context.fielded_end.isoformat()}


def other_shape(relation, column, context):
    return {"value": {"n": relation.query("t", "SELECT count(*) FROM t").fetchone()[0]}}


def hang(relation, column, context):
    time.sleep(60)
"""

ANALYST_LAYER = """
[[tables]]
name = "fielded"
path = "rows.csv"
date_column = "fielded_on"

[[tables]]
name = "unfiltered"
path = "rows.csv"

[[tables]]
name = "wave"
period = "W5*"
path = "rows.csv"

[[tables]]
name = "quarters"
period_column = "quarter"
path = "rows.csv"

[[tables]]
name = "loose"
path = "rows.csv"
absolute = 0.01

[extractors]
count = "extractors.py:count"
window = "extractors.py:window"
hang = "extractors.py:hang"

[extractors.share]
module = "extractors.py"

[[extractors.extractShare]]
module = "extractors.py"
function = "count"

[[extractors.extractShare]]
study = "Other Study"
module = "extractors.py"
function = "other_shape"

[[extractors.extractShare]]
study = "Other Study"
table = "quarters"
module = "extractors.py"
function = "share"

[verify]
timeout = {timeout}
"""


@pytest.fixture
def analyst(tmp_path: Path) -> Path:
    return make_analyst(tmp_path)


def make_analyst(tmp_path: Path) -> Path:
    """The analyst's data layer in `tmp_path`: rows.csv, extractors.py, helpers.py and the layer file."""
    (tmp_path / "rows.csv").write_text(ANALYST_ROWS)
    (tmp_path / "extractors.py").write_text(ANALYST_EXTRACTORS)
    (tmp_path / "helpers.py").write_text("SCALE = 1\n")
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(ANALYST_LAYER.format(timeout=20))
    return path


def analyst_cite(
    table, function="count", period="W6 (April 2026)", fielded="2026-04-02/2026-04-19", study="S", base_n=10
):
    return citation(
        study=study,
        period=period,
        fielded=fielded,
        weight="unweighted",
        base={"name": "Answering q1", "n": base_n},  # 10: the fewest rows any of the tests keeps
        source={"table": table, "column": "q1", "function": function},
        warnings=None,
    )


COUNT_EXTRACTOR = """
def count(relation, column, context):
    return {"n": relation.query("t", f'SELECT count(*) FROM t WHERE "{column}" = 1').fetchone()[0]}
"""


def plain_cite(function: str, table: str = "t", period: str = "P", n: int = 4, **overrides) -> dict:
    """A citation of study S, unweighted, without a fielded window, of column q1 (overrides: any field)."""
    fields = {"fielded": None, "weight": "unweighted", "warnings": None, "base": {"name": "All", "n": n}}
    source = {"table": table, "column": "q1", "function": function}
    return citation(**{"study": "S", "period": period, "source": source, **fields, **overrides})


def outcomes(report) -> dict[str, tuple]:
    return {v.task_id: (v.verdict, v.reason, v.rows_used) for v in report.verdicts}


@pytest.mark.slow
def test_rows_are_narrowed_to_the_fielded_window(archive, write, analyst):
    ingest(
        archive,
        write,
        {
            "fielded": ({"n": 15}, analyst_cite("fielded")),
            "no-date-column": ({"n": 15}, analyst_cite("unfiltered")),
            "context": ({"start": 0, "end": 0}, analyst_cite("fielded", "window")),
            "empty-window": ({"n": 15}, analyst_cite("fielded", fielded="2025-01-01/2025-01-31")),
        },
    )
    found = outcomes(archive.verify())
    assert found["fielded"] == ("reproduced", None, "rows fielded 2026-04-02..2026-04-19: 30 of 70")
    assert found["no-date-column"] == (
        "unscoped",
        "the fielded window 2026-04-02..2026-04-19 was not applied: table 'unfiltered' declares no date_column "
        "(declare date_column = the column of each row's fielding date); 0 of 1 claims agree over these rows; "
        "1 of 1 claims differ; /n: claimed 15, re-derived 55",
        "all rows: 70 (no date column declared: fielded 2026-04-02..2026-04-19 not applied)",
    )
    assert found["empty-window"][:2] == ("not-rerunnable", "table 'fielded' has no rows fielded 2025-01-01..2025-01-31")
    (context,) = archive.verify(task="context").verdicts
    assert context.differences == [
        {"pointer": "/end", "claimed": 0, "rerun": "2026-04-19", "note": "the re-derived value here is not a number"},
        {"pointer": "/start", "claimed": 0, "rerun": "2026-04-02", "note": "the re-derived value here is not a number"},
    ]


@pytest.mark.slow
def test_periods_match_by_glob_or_by_a_period_column(archive, write, analyst):
    ingest(
        archive,
        write,
        {
            "glob": ({"n": 55}, analyst_cite("wave", period="W5 (March 2026)", fielded=None)),
            "glob-miss": ({"n": 55}, analyst_cite("wave", period="W6 (April 2026)", fielded=None)),
            "q1": ({"n": 45}, analyst_cite("quarters", period="Q1", fielded=None)),
            "q2": ({"n": 5}, analyst_cite("quarters", period="Q2", fielded=None)),
            "q4": ({"n": 5}, analyst_cite("quarters", period="Q4", fielded=None)),
        },
    )
    found = outcomes(archive.verify())
    assert found["glob"] == ("reproduced", None, "all rows: 70")
    assert found["glob-miss"] == (
        "not-rerunnable",
        "the data layer has no table 'wave' for study 'S', period 'W6 (April 2026)'",
        None,
    )
    assert found["q1"] == ("reproduced", None, "rows with quarter = 'Q1': 50 of 70")
    assert found["q2"] == ("reproduced", None, "rows with quarter = 'Q2': 10 of 70")
    assert found["q4"] == (
        "not-rerunnable",
        "table 'quarters' has no rows with quarter = 'Q4'",
        "rows with quarter = 'Q4': 0 of 70",
    )


@pytest.mark.slow
def test_rounded_claims_tolerances_per_table_and_scale(archive, write, analyst):
    # 15 of the 30 fielded rows answer 1: a share of 0.5; of all 70 rows, 55/70 = 0.7857...
    ingest(
        archive,
        write,
        {
            "rounded": ({"share": 0.79}, analyst_cite("unfiltered", "share", fielded=None)),
            "too-precise": ({"share": 0.7857}, analyst_cite("unfiltered", "share", fielded=None)),
            "loose": ({"share": 0.78}, analyst_cite("loose", "share", fielded=None)),
        },
    )
    found = outcomes(archive.verify())
    assert found["rounded"][0] == "reproduced"
    assert found["too-precise"][0] == "reproduced"
    assert found["loose"][0] == "reproduced"  # absolute 0.01 on that table
    (verdict,) = archive.verify(task="rounded").verdicts
    assert verdict.comparison == "as rounded (half-even or half-up at the claim's decimal places)"
    assert "re-run: reproduced, over all rows: 70 (verified" in archive.render("rounded")
    (analyst.parent / "helpers.py").write_text("SCALE = 100\n")
    found = outcomes(archive.verify())
    assert found["rounded"][:2] == (
        "differs",
        "scale: claimed as fraction, data gives percent; 1 of 1 claims differ; /share: claimed 0.79, "
        "re-derived 78.571",  # rounded for people (issue 41), not 78.57142857142857
    )
    shown = archive.render("rounded")
    assert "the data layer re-derives 78.571 (scale: claimed as fraction, data gives percent)\n" in shown
    assert "RE-RUN DIFFERS, over all rows: 70 (verified" in shown


@pytest.mark.slow
def test_a_change_to_a_module_the_extractor_imports_makes_verdicts_stale(archive, write, analyst, tmp_path):
    ingest(archive, write, {"t1": ({"share": 0.79}, analyst_cite("unfiltered", "share"))})
    archive.verify()
    assert [v.stale for v in archive.verdicts().verdicts] == [False]
    (tmp_path / "helpers.py").write_text("SCALE = 1  # reviewed\n")
    assert [v.stale for v in archive.verdicts().verdicts] == [True]


@pytest.mark.slow
def test_extractors_keyed_by_study_and_table(archive, write, analyst):
    ingest(
        archive,
        write,
        {
            "default": ({"n": 55}, analyst_cite("unfiltered", "extractShare", fielded=None)),
            "other": (
                {"value": {"n": 70}},
                analyst_cite("unfiltered", "extractShare", fielded=None, study="Other Study"),
            ),
            "other-quarters": ({"share": 0.9}, analyst_cite("quarters", "extractShare", "Q1", None, "Other Study")),
        },
    )
    found = outcomes(archive.verify())
    assert found["default"][0] == found["other"][0] == found["other-quarters"][0] == "reproduced"


@pytest.mark.slow
def test_a_hanging_extractor_costs_one_timeout_per_table(archive, write, analyst):
    analyst.write_text(ANALYST_LAYER.format(timeout=3))
    ingest(
        archive,
        write,
        {
            "a": ({"n": 1}, analyst_cite("unfiltered", "hang")),
            "b": ({"n": 2}, analyst_cite("unfiltered", "hang", period="W7")),  # another citation
            "c": ({"n": 55}, analyst_cite("unfiltered", fielded=None)),
        },
    )
    found = outcomes(archive.verify())
    assert found["a"][:2] == ("not-rerunnable", "the extractor did not finish within 3s and was stopped")
    assert found["b"][:2] == (
        "not-rerunnable",
        f"the extractor {analyst.parent / 'extractors.py'}:hang did not finish within 3s on table 'unfiltered' "
        "earlier in this run; not run on it again",
    )
    assert found["c"][0] == "reproduced"


@pytest.mark.slow
def test_each_verdict_is_stored_as_it_is_made(archive, write, analyst, monkeypatch):
    from archiver.verify import worker

    ingest(
        archive,
        write,
        {
            "a": ({"n": 55}, analyst_cite("unfiltered", fielded=None)),
            "b": ({"n": 55}, analyst_cite("wave", period="W5", fielded=None)),
        },
    )
    real, calls = worker.Worker.run, []

    def killed_after_one(self, *args):
        calls.append(args)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(worker.Worker, "run", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        archive.verify()
    assert archive.con.execute("SELECT count(*), any_value(verdict) FROM verdicts").fetchone() == (1, "reproduced")


@pytest.mark.slow
def test_status_exits_0_unless_asked_to_gate_and_the_summary_reads_as_english(archive, write, analyst, tmp_path):
    ingest(
        archive,
        write,
        {
            "a": ({"n": 1}, analyst_cite("unfiltered", fielded=None)),
            "b": ({"n": 55}, analyst_cite("unfiltered", fielded=None)),
            "c": ({"n": 55}, analyst_cite("unfiltered", fielded=None, study="Another")),
        },
    )
    analyst.write_text('studies = ["S"]\n' + ANALYST_LAYER.format(timeout=20))
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    ran = CliRunner().invoke(main, ["verify", "--db", db])
    assert ran.exit_code == 1
    assert (
        "2 citations: 1 reproduced, 1 differs\n1 citation skipped: its study is outside the data layer\n" in ran.output
    )
    assert CliRunner().invoke(main, ["verify", "--status", "--db", db]).exit_code == 0
    assert CliRunner().invoke(main, ["verify", "--status", "--db", db, "--fail-on", "differs"]).exit_code == 1
    assert CliRunner().invoke(main, ["verify", "--status", "--db", db, "--fail-on", "stale"]).exit_code == 0
    (tmp_path / "rows.csv").write_text(ANALYST_ROWS + "X,2026-04-03,Q1,1\n")
    stale = CliRunner().invoke(main, ["verify", "--status", "--db", db, "--fail-on", "stale"])
    assert stale.exit_code == 1
    assert "STALE: 2 verdicts rest on a data layer" in stale.output
