"""archiver query citations / claims / impact: exact row sets, every filter, every format."""

from __future__ import annotations

import csv
import io
import json
from itertools import islice
from pathlib import Path

import duckdb
import orjson
import pytest
from click.testing import CliRunner

from archiver.cli import main
from archiver.errors import QueryError
from archiver.query.output import stream
from archiver.query.selection import like_pattern
from archiver.render.formats import write as render

from .lineage_data import MALICIOUS, SCRIPT_STUDY, build, cite, task

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lineage(archive, write):
    archive.ingest(build(write), workers=1)
    return archive


def claim_set(rows) -> set[tuple]:
    return {(r["task_id"], r["pointer"], r["study"], r["period"]) for r in rows}


W6 = ("Versant Mega Tracker", "W6 (April 2026)")
ALL_CLAIMS = {
    ("t1", "/share", *W6),
    ("t1", "/n", *W6),
    ("t2", "/x", "Étude Santé 2026", "Vague 2"),
    ("t2", "/x", "Versant Mega Tracker", "W5 (March 2026)"),
    ("t3", "/y", None, None),
    ("t4", "/z", MALICIOUS, "W6 (April 2026)"),
    ("t5", "/w", *W6),
    ("t6", "/v", SCRIPT_STUDY, "W6 (April 2026)"),
}


@pytest.mark.slow
def test_claims_unfiltered_one_row_per_claim_and_citation(lineage):
    rows = list(lineage.claims())
    assert claim_set(rows) == ALL_CLAIMS
    assert len(rows) == len(ALL_CLAIMS)  # t1 is stored twice but its claims count once


@pytest.mark.slow
def test_claim_row_fields(lineage):
    (row,) = [r for r in lineage.claims(task="t1") if r["pointer"] == "/n"]
    assert row["value"] == 1210
    assert isinstance(row["value"], int)
    assert row["part_index"] == 0
    assert row["artifact_id"] == "answer"
    assert row["context_id"] == "ctx-1"
    assert row["agent"] == "Versant Insights"
    assert row["timestamp"].startswith("2026-04-20T10:00:00")
    assert row["base_name"] == "Adults 18-74, aware of brand"
    assert row["base_n"] == 4210
    assert row["source_table"] == "versant_flat"
    assert row["source_function"] == "extractFunnel"
    assert row["warnings"] == ["Base under 100 in the 65-74 cell"]
    assert row["valid"] is True
    assert row["inferred"] is False
    assert row["problems"] == []
    assert row["source_path"].endswith(("versant/a.jsonl", "versant/c.jsonl"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"study": "Versant Mega Tracker"}, {("t1", "/share"), ("t1", "/n"), ("t2", "/x"), ("t5", "/w")}),
        ({"study": "Versant*"}, {("t1", "/share"), ("t1", "/n"), ("t2", "/x"), ("t5", "/w")}),
        ({"study": "Étude Santé 2026"}, {("t2", "/x")}),
        ({"study": "*Santé*"}, {("t2", "/x")}),
        ({"study": "etude sante 2026"}, set()),
        ({"study": ["Étude*", SCRIPT_STUDY]}, {("t2", "/x"), ("t6", "/v")}),
        ({"period": "W5 (March 2026)"}, {("t2", "/x")}),
        ({"period": "W6*"}, {("t1", "/share"), ("t1", "/n"), ("t4", "/z"), ("t5", "/w"), ("t6", "/v")}),
        ({"column": "s12r2"}, {("t2", "/x")}),
        ({"column": "q7"}, {("t2", "/x")}),
        ({"table": "sante_panel"}, {("t2", "/x")}),
        ({"function": "extractShare"}, {("t2", "/x")}),
        ({"weight": "unweighted"}, {("t2", "/x")}),
        ({"agent": "Agent Santé"}, {("t2", "/x")}),
        ({"agent": "Versant*", "column": "s14r5"}, {("t1", "/share"), ("t1", "/n")}),
        ({"task": "t4"}, {("t4", "/z")}),
        ({"task": "t*", "study": "Versant*", "period": "W5*"}, {("t2", "/x")}),
        ({"since": "2026-06-01"}, {("t4", "/z"), ("t5", "/w"), ("t6", "/v")}),
        ({"until": "2026-04-20"}, {("t1", "/share"), ("t1", "/n"), ("t3", "/y")}),
        ({"since": "2026-05-01", "until": "2026-06-01T00:00:00Z"}, {("t2", "/x"), ("t4", "/z")}),
        ({"has_warnings": True}, {("t1", "/share"), ("t1", "/n"), ("t4", "/z"), ("t5", "/w"), ("t6", "/v")}),
        ({"has_warnings": False}, {("t2", "/x")}),
        ({"min_n": 1000}, {("t1", "/share"), ("t1", "/n"), ("t2", "/x"), ("t6", "/v")}),
        ({"max_n": 100}, {("t4", "/z")}),
        ({"valid": False}, {("t5", "/w")}),
        ({"inferred": True}, {("t4", "/z")}),
        ({"inferred": False, "task": "t4"}, set()),
    ],
)
def test_each_filter_exact_rows(lineage, filters, expected):
    assert {(r["task_id"], r["pointer"]) for r in lineage.claims(**filters)} == expected


@pytest.mark.slow
def test_valid_filter_and_uncited_claims(lineage):
    valid = {(r["task_id"], r["pointer"]) for r in lineage.claims(valid=True)}
    assert ("t5", "/w") not in valid
    assert ("t3", "/y") not in valid
    assert ("t1", "/n") in valid


@pytest.mark.slow
@pytest.mark.parametrize(
    "value",
    [
        MALICIOUS,
        "x' OR '1'='1",
        "'; DROP TABLE claims; --",
        "Versant%",
        "Versant_Mega_Tracker",
        "%",
        "_*",
        "\\",
        "W6 (April 2026)' --",
    ],
)
def test_malicious_filter_values_match_literally(lineage, value):
    rows = list(lineage.claims(study=value))
    assert all(r["study"] == value for r in rows)
    assert bool(rows) == (value == MALICIOUS)
    assert lineage.stats()["claims"] == 9  # nothing was dropped


@pytest.mark.slow
def test_glob_escapes_like_characters(lineage):
    assert like_pattern("50%_off*") == "50\\%\\_off%"
    assert like_pattern("a\\*b*") == "a*b%"
    assert {r["study"] for r in lineage.claims(study="O'Brien\"; DROP*")} == {MALICIOUS}


@pytest.mark.slow
def test_citations_counts(lineage):
    rows = {
        (r["study"], r["period"], r["source_column"], r["valid"], r["inferred"]): (
            r["claims"],
            r["results"],
            r["tasks"],
            r["agents"],
        )
        for r in lineage.citations()
    }
    assert rows == {
        ("Versant Mega Tracker", "W6 (April 2026)", "s14r5", True, False): (2, 1, 1, 1),
        ("Étude Santé 2026", "Vague 2", "q7", True, False): (1, 1, 1, 1),
        ("Versant Mega Tracker", "W5 (March 2026)", "s12r2", True, False): (1, 1, 1, 1),
        (MALICIOUS, "W6 (April 2026)", "s14r5", True, True): (1, 1, 1, 0),
        ("Versant Mega Tracker", "W6 (April 2026)", "s14r5", False, False): (1, 1, 1, 0),
        (SCRIPT_STUDY, "W6 (April 2026)", "s14r5", True, False): (1, 1, 1, 0),
    }


@pytest.mark.slow
def test_citations_filtered(lineage):
    rows = list(lineage.citations(column="s14r5", valid=True, inferred=False))
    assert {r["study"] for r in rows} == {"Versant Mega Tracker", SCRIPT_STUDY}
    assert [r["study"] for r in lineage.citations(min_n=1800, max_n=1900)] == ["Étude Santé 2026"]
    assert {r["study"] for r in lineage.citations(agent="Versant*")} == {"Versant Mega Tracker"}


@pytest.mark.slow
def test_impact(lineage):
    rows = {
        (r["kind"], r["id"]): (r["claims"], r["results"], r["citations"])
        for r in lineage.impact(study="Versant Mega Tracker")
    }
    paths = {k[1] for k in rows if k[0] == "source_file"}
    assert {p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in paths} == {
        "versant/a.jsonl",
        "versant/c.jsonl",
        "sante/b.jsonl",
        "other/f.jsonl",
    }
    assert {k: v for k, v in rows.items() if k[0] != "source_file"} == {
        ("task", "t1"): (2, 1, 1),
        ("task", "t2"): (1, 1, 1),
        ("task", "t5"): (1, 1, 1),
        ("context", "ctx-1"): (2, 1, 1),
        ("context", "ctx-2"): (1, 1, 1),
        ("context", "ctx-5"): (1, 1, 1),
        ("agent", "Versant Insights"): (2, 1, 1),
        ("agent", "Agent Santé"): (1, 1, 1),
    }
    assert all(v == (2, 1, 1) for k, v in rows.items() if k[0] == "source_file" and "versant/" in k[1])
    assert list(lineage.impact(study="nothing such")) == []


@pytest.mark.slow
def test_impact_agent_filter_keeps_only_its_copies(lineage):
    kinds = {(r["kind"], r["id"]) for r in lineage.impact(agent="Agent Santé")}
    assert ("task", "t2") in kinds
    assert ("task", "t1") not in kinds


@pytest.mark.slow
def test_order_by_and_limit(lineage):
    rows = list(lineage.claims(order_by="-value", limit=3))
    assert [r["value"] for r in rows] == [1210, 7, 5]
    assert [r["value"] for r in lineage.claims(order_by="value asc", limit=1)] == [0.42]
    with pytest.raises(QueryError, match="cannot order by"):
        lineage.claims(order_by="value; DROP TABLE claims")
    with pytest.raises(TypeError, match="unknown filter"):
        lineage.claims(studdy="x")


def test_rows_stream_in_batches_without_materialising_the_result():
    con = duckdb.connect()
    # a billion rows: answered only because nothing is built whole before the first batch
    cursor = con.execute("SELECT (i % 7)::VARCHAR AS value, 4210.0::DOUBLE AS base_n FROM range(1000000000) t(i)")
    rows = stream(cursor, batch_size=5)
    assert next(rows) == {"value": 0, "base_n": 4210}
    assert [row["value"] for row in islice(rows, 13)] == [1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6]


def run(args: list[str], db: str):
    result = CliRunner().invoke(main, [*args, "--db", db])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
@pytest.mark.parametrize("command", ["claims", "citations", "impact"])
def test_formats_parse_with_stdlib(lineage, command, tmp_path):
    lineage.close()
    db = str(tmp_path / "archive.duckdb")
    as_json = json.loads(run(["query", command, "--format", "json"], db))
    as_jsonl = [json.loads(line) for line in run(["query", command, "--format", "jsonl"], db).splitlines()]
    as_csv = list(csv.DictReader(io.StringIO(run(["query", command, "--format", "csv"], db))))
    assert as_json == as_jsonl
    assert len(as_csv) == len(as_json) > 0
    assert list(as_csv[0]) == list(as_json[0])
    for from_csv, from_json in zip(as_csv, as_json, strict=False):
        for name, value in from_json.items():
            expected = (
                ""
                if value is None
                else json.dumps(value, ensure_ascii=False)
                if isinstance(value, list)
                else str(value).lower()
                if isinstance(value, bool)
                else str(value)
            )
            if isinstance(value, list):
                assert json.loads(from_csv[name]) == value
            else:
                assert from_csv[name] == expected
    table = run(["query", command, "--format", "table"], db)
    assert "…" not in table  # not a terminal: no value is cut
    assert table.splitlines()[-1] == f"({len(as_json)} row{'s' if len(as_json) != 1 else ''})"


@pytest.mark.slow
def test_claims_fields_in_machine_formats(lineage, tmp_path):
    lineage.close()
    rows = json.loads(run(["query", "claims", "--format", "json", "--task", "t1"], str(tmp_path / "archive.duckdb")))
    assert list(rows[0]) == [
        "value",
        "unit",
        "stated",
        "pointer",
        "cell",
        "part_index",
        "task_id",
        "message_id",
        "context_id",
        "artifact_id",
        "agent",
        "timestamp",
        "source_path",
        "study",
        "period",
        "fielded",
        "base_name",
        "base_n",
        "weight",
        "source_table",
        "source_column",
        "source_function",
        "warnings",
        "valid",
        "problems",
        "inferred",
        "citation_hash",
        "verdict",
        "rerun_value",
        "verdict_reason",
        "verified_at",
        "status",
    ]


@pytest.mark.slow
def test_cli_filters_and_errors(lineage, tmp_path):
    lineage.close()
    db = str(tmp_path / "archive.duckdb")
    out = run(["query", "claims", "--format", "jsonl", "--study", "Étude*", "--study", MALICIOUS, "--has-warnings"], db)
    assert [json.loads(line)["task_id"] for line in out.splitlines()] == ["t4"]
    out = run(["query", "claims", "--format", "jsonl", "--invalid"], db)
    assert [json.loads(line)["task_id"] for line in out.splitlines()] == ["t5"]
    out = run(["query", "claims", "--format", "jsonl", "--inferred"], db)
    assert [json.loads(line)["task_id"] for line in out.splitlines()] == ["t4"]
    bad = CliRunner().invoke(main, ["query", "claims", "--order-by", "nope", "--db", db])
    assert bad.exit_code == 1
    assert "cannot order by 'nope'" in bad.output
    bad = CliRunner().invoke(main, ["query", "claims", "--since", "yesterday", "--db", db])
    assert bad.exit_code == 2  # a usage error, as click's own, with the command's usage
    assert "Invalid value for '--since': 'yesterday' is not an ISO-8601" in bad.output


EDGE_NUMBERS = (
    b'{"big": 123456789012345678901234567890, "huge": 1e300, "tiny": 5e-324, "negzero": -0.0, '
    b'"whole": 100.0, "third": 0.3333333333333333, "long": 1' + b"0" * 400 + b"}"
)


def rendered(rows, fmt: str) -> str:
    out = io.BytesIO()
    render(rows, fmt, out)
    return out.getvalue().decode()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["claims", "citations", "impact"])
def test_json_of_the_lineage_queries_is_written_by_duckdb(archive, write, command):
    """The lineage queries' JSON is made by DuckDB alone (no Python object per row): orjson's layout, a row
    a line, the fields in order, and values exact at the edges (huge integers, subnormals, microseconds)."""
    paths = build(write)
    edge = task(
        "t7",
        [{"data": {"placeholder": 0}}, cite(base={"name": "Large", "n": 1e20})],
        when="2026-07-01T12:00:00.123456Z",
        context_id="ctx-7",
    )
    paths.append(write("edge/h.jsonl", orjson.dumps(edge).replace(b'{"placeholder":0}', EDGE_NUMBERS) + b"\n"))
    archive.ingest(paths, workers=1)
    rows = getattr(archive, command)()
    assert rows.spelled is not None
    as_json, as_jsonl = rendered(rows, "json"), rendered(getattr(archive, command)(), "jsonl")
    lines = as_json.split("\n")
    assert (lines[0], lines[-2:]) == ("[", ["]", ""])
    assert all(line.endswith("},") for line in lines[1:-3])
    parsed = [json.loads(line.removesuffix(",")) for line in lines[1:-2]]
    assert parsed == json.loads(as_json) == [json.loads(line) for line in as_jsonl.splitlines()]
    assert len(parsed) > 0
    assert all(list(row) == list(rows.fields) for row in parsed)
    if command == "claims":
        values = {row["pointer"]: row["value"] for row in parsed if row["task_id"] == "t7"}
        assert values["/big"] == 123456789012345678901234567890
        assert values["/long"] == 10**400
        assert values["/tiny"] == 5e-324
        assert values["/huge"] == 1e300
        assert str(values["/negzero"]) == "-0.0"
        assert values["/whole"] == 100.0
        assert values["/third"] == 0.3333333333333333
        assert {row["timestamp"] for row in parsed if row["task_id"] == "t7"} == {"2026-07-01T12:00:00.123456+00:00"}
        assert {row["base_n"] for row in parsed if row["task_id"] == "t7"} == {10**20}
        (n,) = [row for row in parsed if (row["task_id"], row["pointer"]) == ("t1", "/n")]
        assert (n["value"], n["part_index"], n["valid"], n["warnings"]) == (
            1210,
            0,
            True,
            ["Base under 100 in the 65-74 cell"],
        )


@pytest.mark.slow
def test_json_of_no_rows(lineage):
    assert rendered(lineage.claims(study="nothing"), "json") == "[]\n"
    assert rendered(lineage.claims(study="nothing"), "jsonl") == ""


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_command_and_its_workers_go_without_pandas(tmp_path, workers):
    """DuckDB imports pandas (where installed, as in this test environment) on the first statement with
    bound parameters, and pyarrow on its first array, and both import numpy; the command's processes go
    without pandas and numpy, 0.2 to 0.3 s sooner to work each, and still ingest and answer in full."""
    import os
    import subprocess
    import sys

    from benchmarks.generate import generate

    pytest.importorskip("pandas")  # without pandas installed there is nothing to keep out
    truth = generate(tmp_path / "corpus", 4000, 7)  # 4.8 MB: past the size below which no worker starts
    db = str(tmp_path / "archive.duckdb")
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}  # every process lists its imports on stderr
    command = [sys.executable, "-m", "archiver"]
    ingest = [*command, "ingest", str(tmp_path / "corpus"), "--db", db, "--workers", workers, "--json"]
    done = [subprocess.run(ingest, capture_output=True, text=True, env=env, cwd=ROOT)]
    query = [*command, "query", "claims", "--study", "Footfall Monitor", "--db", db, "--format", "jsonl"]
    done.append(subprocess.run(query, capture_output=True, text=True, env=env, cwd=ROOT))
    assert [d.returncode for d in done] == [0, 0], [d.stderr[-3000:] for d in done]
    summary = json.loads(done[0].stdout)
    assert (summary["claims"], summary["quarantined"]) == (truth["claims"], 0)
    assert len(done[1].stdout.splitlines()) > 0
    for d in done:
        imported = {line.rsplit("|", 1)[-1].strip() for line in d.stderr.splitlines() if line.startswith("import time")}
        # an import refused is listed too, as `pandas` alone: loading it lists its modules
        assert "duckdb" in imported
        assert not any(name.startswith(("pandas.", "numpy.")) for name in imported)


@pytest.mark.parametrize("command", ["claims", "citations", "impact"])
def test_a_query_listing_holds_duckdb_to_the_listing_memory(lineage, tmp_path, monkeypatch, command):
    """`archiver query` writes its rows with DuckDB's buffer pool held to `LISTING_MEMORY` (a sort of millions of
    wide rows spills past it: unbounded, the busiest column of 100M claims peaked at 6.0 GiB), and as it was
    after."""
    import archiver.query.limits
    import archiver.render.formats

    lineage.close()
    db = str(tmp_path / "archive.duckdb")
    monkeypatch.setattr(archiver.query.limits, "LISTING_MEMORY", 96 * 2**20)
    seen, write = [], archiver.render.formats.write

    def noted(listing, *args):
        seen.append(listing.rows.con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
        return write(listing, *args)

    monkeypatch.setattr(archiver.render.formats, "write", noted)
    assert run(["query", command, "--format", "jsonl"], db).strip()
    assert seen == ["96.0 MiB"]
