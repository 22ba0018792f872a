"""What a person reads in the terminal (issue 41, items 3 and 4): every table and text fits the terminal by
one rule (`archiver.render.fitting`), seen in a pseudo-terminal through a terminal emulator (pyte) at 60,
80, 100 and 200 columns. Before, `query claims` cut every column to six characters while empty ones kept
their width, `query impact` cut paths at their end, `stats` cut the words that explain each count, and
ingest's summary and the audit broke inside numbers and words at the terminal's edge."""

from __future__ import annotations

import re

import pytest

from archiver.render.fitting import Column, column, cut, widths, wrap
from archiver.store.views import described
from tests.terminal import in_terminal

pyte = pytest.importorskip("pyte", reason="the test extra's pyte is not installed")

WIDTHS = [60, 80, 100, 200]
ANSI = re.compile(rb"\x1b\[[0-9;]*m")
IMPACT_FILES = ("rpc-v1.jsonl", "compat-v03-rpc.jsonl", "stream-v1.sse", "stream-partial.sse")


def written_lines(written: bytes) -> list[str]:
    """The lines as written (colours taken out): none may be wider than the terminal, or it wraps."""
    return ANSI.sub(b"", written).decode().replace("\r\n", "\n").split("\n")


def fits(written: bytes, columns: int) -> None:
    wide = [line for line in written_lines(written) if len(line) > columns]
    assert wide == [], f"wider than {columns} columns: {wide}"


def read(lines: list[str]) -> str:
    """The screen as one text, its lines joined (a path broken after a `/` joined again)."""
    return re.sub(r"/ +", "/", " ".join(" ".join(lines).split()))


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_query_claims_fits_leaving_out_empty_columns_and_keeping_the_status(samples_copy, columns):
    written, lines = in_terminal(["query", "claims", "--column", "visits_pw", "--db", samples_copy], columns)
    fits(written, columns)
    assert sum("invalid: base.n is 0, not positive" in line for line in lines) == 2
    assert lines[-1] == "(4 rows; empty, not shown: unit, warnings)"
    assert not [line for line in lines if re.match(r"(unit|warnings)\b", line) or " unit " in line]
    assert "…" not in "".join(lines), "what does not fit as columns is shown a row at a time"
    if columns == 200:
        heads = ["value", "pointer", "task_id", "study", "period", "source_column", "base_n", "status"]
        assert lines[0].split() == heads
    else:
        assert "status         invalid: base.n is 0, not positive" in lines
        assert "base_n         1480" in lines


@pytest.mark.slow
@pytest.mark.parametrize("columns", [110, 130])
def test_query_claims_is_a_table_only_where_its_ids_and_status_fit_whole(samples_copy, columns):
    """At 110 columns the table fitted by cutting the ids (`task-fnl-r…`, `/mean_visi…`): a claim could not be
    told from another; it is shown a claim at a time until the ids and the status fit whole (126 here)."""
    written, lines = in_terminal(["query", "claims", "--column", "visits_pw", "--db", samples_copy], columns)
    fits(written, columns)
    if columns == 110:
        assert "task_id        task-fnl-rpc-visits" in lines
        assert "pointer        /mean_visits_per_week" in lines
    else:
        assert lines[0].split()[:3] == ["value", "pointer", "task_id"]
        assert lines[2].split()[:3] == ["1.8", "/mean_visits_per_week", "task-fnl-rpc-visits"]
        assert lines[2].endswith("invalid: base.n is 0, not positive")


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_query_impact_cuts_paths_from_the_left_keeping_the_file_name(samples_copy, columns):
    args = ["query", "impact", "--study", "Versant Mega Tracker", "--db", samples_copy]
    written, lines = in_terminal(args, columns)
    fits(written, columns)
    text = read(lines)
    for name in IMPACT_FILES:
        assert f"/versant-insights/{name}" in text, name
    if columns == 80:
        assert "source_file  …/versant-insights/stream-v1.sse" in "\n".join(lines)
        assert "source_file  …/versant-insights/stream-partial.sse" in "\n".join(lines)
    assert lines[-1] == "(12 rows)"


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_stats_wraps_the_words_that_explain_each_count(samples_copy, columns):
    written, lines = in_terminal(["stats", "--db", samples_copy], columns)
    fits(written, columns)
    text = read(lines)
    for name, value in (("sources", 70), ("records", 271), ("claims", 327), ("records_nothing", 0)):
        assert f"{name} {value} {' '.join(described(name).split())}" in text, name
    assert "…" not in text


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_audit_puts_the_summary_first_errors_first_and_wraps_at_word_boundaries(samples_copy, columns):
    written, lines = in_terminal(["audit", "--db", samples_copy], columns, rows=2000)
    fits(written, columns)
    assert lines[0] == "34 errors, 7 warnings in 68 results (108 stored copies)"[:columns]
    severities = [line.split()[0] for line in lines if line.startswith(("error ", "warning "))]
    assert severities == ["error"] * 34 + ["warning"] * 7
    text = read(lines)
    for sentence in (
        'task d58af959-5f53-4301-80be-e3855543db2b states 3 numbers in artifact "answer" and carries no citation Part',
        "Pulse Assistant 0/1",
        "claims 218 (each counted once)",
    ):
        assert sentence in text
    assert lines[-1] == "34 errors, 7 warnings in 68 results (108 stored copies)"


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_ingest_summary_never_breaks_a_count_from_its_name(tmp_path, columns):
    args = ["ingest", "sample_transcripts/", "--db", str(tmp_path / "a.duckdb"), "--no-progress"]
    written, lines = in_terminal(args, columns)
    fits(written, columns)
    for pair in ("records 271", "quarantined 0", "tasks 63", "parts 381", "citation Parts 88", "agent cards 10"):
        assert [line for line in lines if pair in line], pair


def test_wrap_breaks_between_items_then_words_then_after_a_slash():
    assert wrap("files 70 (0 unchanged)  records 271  quarantined 0", 30, "  ") == [
        "files 70 (0 unchanged)",
        "  records 271  quarantined 0",
    ]
    assert wrap("error    uncited-result  a/long/path/to/file.jsonl line 7", 24, "    ") == [
        "error    uncited-result",
        "    a/long/path/to/",
        "    file.jsonl line 7",
    ]
    assert wrap("parts 25718", 8) == ["parts", "25718"]


def test_the_widest_column_shrinks_first_and_numbers_and_status_stay_whole():
    columns = [
        column("n", ["12345"], [12345]),
        column("study", ["Northwind Retail Pulse"], ["Northwind Retail Pulse"]),
        column("task_id", ["task-fnl"], ["task-fnl"]),
        column("status", ["invalid: base.n is 0"], ["invalid: base.n is 0"]),
    ]
    assert widths(columns, 200) == [5, 22, 8, 20]
    assert widths(columns, 60) == [5, 21, 8, 20]
    assert widths(columns, 50) == [5, 11, 8, 20]
    assert widths(columns, 40) is None  # even at their least (10 for the study) they do not fit
    assert columns[0] == Column("n", 5, 5, numeric=True, prose=False)
    identified = [column("task_id", ["task-vrs-compat-funnel"], ["task-vrs-compat-funnel"]), *columns]
    assert widths(identified, 75) == [22, 5, 12, 8, 20]
    assert widths(identified, 72) is None  # the id is never cut to `task-vrs-…`


def test_a_path_is_cut_from_the_left_at_a_slash_keeping_its_file_name():
    path = "/work/sample_transcripts/versant-insights/stream-partial.sse"
    assert cut(path, 40) == "…/versant-insights/stream-partial.sse"
    assert cut(path, 22) == "…/stream-partial.sse"
    assert cut("Northwind Retail Pulse", 10) == "Northwind…"
    assert column("id", [path], [path]).least == len("…/stream-partial.sse")


@pytest.mark.slow
@pytest.mark.parametrize("columns", WIDTHS)
def test_show_fits_its_lines_and_tables(samples_copy, columns):
    written, lines = in_terminal(["show", "task-vrs-rpc-funnel", "--db", samples_copy], columns)
    fits(written, columns)
    text = read(lines)
    assert "base: Adults 18-74, aware of brand · n=4210 · weight main_weight" in text
    assert "stored in: sample_transcripts/versant-insights/rpc-v1.jsonl" in text
    assert "18-34 0.42 1210.0" in text
