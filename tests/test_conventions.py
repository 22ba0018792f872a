"""The command line's conventions (docs/cli.md): output formats and their shortcuts, tables, version,
colour, lake-only options, the exit-code table, a closed pipe, and the hint of an empty answer."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.progress import Progress
from archiver.query.listing import Listing
from archiver.render import table
from archiver.render.formats import RENDERERS

from .transcripts import SAMPLES


@pytest.fixture(scope="module")
def db(samples_copy) -> str:
    return samples_copy


def run(db: str, *args: str, code: int | None = 0, **kwargs):
    result = CliRunner().invoke(main, [*args, "--db", db], **kwargs)
    if code is not None:
        assert result.exit_code == code, result.output
    return result


ROW_COMMANDS = [
    ["query", "claims", "--limit", "3"],
    ["query", "impact"],
    ["sql", "SELECT study, base_n FROM citations ORDER BY all LIMIT 4"],
    ["stats"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", ROW_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(
    ("flag", "fmt"),
    [("--json", "json"), ("--nl", "jsonl"), ("--csv", "csv"), ("--tsv", "tsv"), ("--md", "markdown"), ("-t", "table")],
)
def test_every_command_that_prints_rows_takes_every_format_and_its_shortcut(db, command, flag, fmt):
    by_name = run(db, *command, "--format", fmt).stdout
    assert run(db, *command, flag).stdout == by_name
    assert by_name


@pytest.mark.slow
def test_stats_takes_the_output_formats(db):
    """As JSON, one object of counts (scripts read `stats --json | jq .claims`) and the validly cited figure;
    in every other format, the figure's rows, then a row (name, value, what it counts) per count."""
    from archiver.render.findings import cited_rows
    from archiver.store.views import described

    counts = json.loads(run(db, "stats", "--format", "json").stdout)
    assert counts == json.loads(run(db, "stats", "--json").stdout)
    assert {"records", "claims", "citations"} <= set(counts)
    cited = counts.pop("validly_cited")
    rows = [json.loads(line) for line in run(db, "stats", "--nl").stdout.splitlines()]
    assert rows == cited_rows(cited) + [
        {"name": name, "value": value, "counts": described(name)} for name, value in counts.items()
    ]
    sources = f"sources,{counts['sources']},{described('sources')}"
    assert sources in run(db, "stats", "--csv").stdout.splitlines()


def test_two_formats_are_a_usage_error(db):
    assert "choose one output format" in run(db, "query", "claims", "--json", "--format", "csv", code=2).output


@pytest.mark.slow
def test_tsv_and_no_headers(db):
    sql = ["sql", "SELECT 'a b' AS x, 2 AS n UNION ALL SELECT 'c\td', 3 ORDER BY n"]
    assert run(db, *sql, "--tsv").stdout == 'x\tn\na b\t2\n"c\td"\t3\n'
    assert run(db, *sql, "--tsv", "--no-headers").stdout == 'a b\t2\n"c\td"\t3\n'
    assert run(db, *sql, "--csv", "--no-headers").stdout == "a b,2\nc\td,3\n"
    assert run(db, *sql, "-t", "--no-headers").stdout == "a b  2\nc d  3\n"
    assert run(db, *sql, "-t").stdout.splitlines()[0].split() == ["x", "n"]


@pytest.mark.slow
def test_a_table_not_on_a_terminal_cuts_no_value(db):
    impact = [
        row for row in json.loads(run(db, "query", "impact", "--format", "json").stdout) if row["kind"] == "source_file"
    ]
    text = run(db, "query", "impact", "--format", "table", env={"COLUMNS": "80"}).stdout
    assert "…" not in text
    for row in impact:
        assert os.path.relpath(row["id"]) in text  # paths beneath the working directory are shown relative


class Terminal(io.BytesIO):
    def isatty(self) -> bool:
        return True


def test_a_table_on_a_terminal_fits_its_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    listing = Listing(("path", "n"), [{"path": "/a/long/path/" * 5, "n": 1}])
    out = Terminal()
    table.write(listing, out)
    assert all(len(line) <= 40 for line in out.getvalue().decode().splitlines())
    assert "…" in out.getvalue().decode()


def test_query_citations_table_shows_validity(db):
    lines = run(db, "query", "citations", "-t").stdout.splitlines()
    assert "status" in lines[0].split()
    assert any(line.rstrip().endswith("valid") or " valid " in line for line in lines[2:])


def test_version_short_and_long():
    for flag in ("-V", "--version"):
        result = CliRunner().invoke(main, [flag])
        assert result.exit_code == 0
        assert "version" in result.output


def test_data_path_only_where_a_lake_is_made():
    def has_data_path(*command: str) -> bool:
        return "--data-path" in CliRunner().invoke(main, [*command, "--help"]).output

    assert has_data_path("ingest")
    assert has_data_path("db", "upgrade")
    for command in (["stats"], ["query", "claims"], ["audit"], ["sql"], ["export"], ["show"], ["db", "check"]):
        assert not has_data_path(*command), command


@pytest.mark.slow
def test_colour_only_when_wanted_and_no_color_respected(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["ingest", str(empty), "--db", str(tmp_path / "a.duckdb")]
    assert "\x1b[" in CliRunner().invoke(main, args, color=True).stderr
    assert "\x1b[" not in CliRunner().invoke(main, args).stderr  # not a terminal
    assert "\x1b[" not in CliRunner().invoke(main, args, color=True, env={"NO_COLOR": "1"}).stderr


# The exit-code table (docs/cli.md): 0 success, 1 findings or failure, 2 usage error, 130/143 interrupted.


@pytest.mark.slow
def test_exit_0_on_success_and_on_an_empty_answer(db):
    run(db, "query", "claims", "--study", "no such study", code=0)
    run(db, "audit", "--fail-on", "never", code=0)


@pytest.mark.slow
def test_exit_1_on_findings_or_failure(db, tmp_path):
    run(db, "audit", "--fail-on", "warning", code=1)
    assert run(str(tmp_path / "missing"), "stats", code=1).output.startswith("Error:")


@pytest.mark.parametrize(
    "args",
    [
        ["query", "claims", "--since", "yesterday"],
        ["export", "--raw", "--until", "2026-13-45"],
        ["audit", "--since", "not a date"],
        ["query", "claims", "--format", "xml"],
        ["query", "claims", "--limit", "-1"],
        ["audit", "--fail-on", "sometimes"],
        ["stats", "--csv", "--json"],
    ],
)
def test_exit_2_on_every_bad_option_value(db, args):
    assert "Usage:" in run(db, *args, code=2).output


def test_exit_130_when_interrupted(db, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Archive, "stats", interrupted)
    result = run(db, "stats", code=130)
    assert result.stderr == "interrupted by SIGINT\n"


def test_exit_130_when_a_query_is_interrupted(db, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise RuntimeError("Query interrupted")  # DuckDB's report of a Ctrl-C during a query

    monkeypatch.setattr(Archive, "sql", interrupted)
    assert run(db, "sql", "SELECT 1", code=130).stderr == "interrupted by SIGINT\n"


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly_with_0(db):
    archiver = shlex.join([sys.executable, "-m", "archiver"])
    script = (
        f"{archiver} sql 'SELECT range AS n, repeat(chr(120), 100) AS x FROM range(300000)' --db {shlex.quote(db)} "
        "--format jsonl | head -1; exit ${PIPESTATUS[0]}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=os.environ, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["n"] == 0


# An empty answer says so on stderr, with the values a text filter may have meant.


def test_a_mistyped_glob_suggests_the_stored_value(db):
    result = run(db, "query", "claims", "--study", "versant*")
    assert result.stdout == ""
    assert result.stderr == (
        "no claims match; --study 'versant*': did you mean 'Versant Mega Tracker'? "
        "(matching is case-sensitive; * is a glob)\n"
    )


def test_a_wrong_case_and_a_misspelling_suggest_the_stored_value(db):
    result = run(db, "query", "citations", "--study", "versant mega tracker", "--agent", "Versant Insigts Agent")
    assert "--study 'versant mega tracker': did you mean 'Versant Mega Tracker'?" in result.stderr
    assert "--agent 'Versant Insigts Agent': did you mean 'Versant Insights Agent'?" in result.stderr
    assert "no citations match" in result.stderr


@pytest.mark.slow
def test_export_and_audit_name_an_unmatched_filter(db):
    assert "no records match; --study 'versant*'" in run(db, "export", "--raw", "--study", "versant*").stderr
    assert "no findings; --study 'versant*': did you mean" in run(db, "audit", "--study", "versant*").stderr
    assert run(db, "audit", "--study", "Versant*", "--rule", "undecoded-part").stderr == ""


@pytest.mark.slow
def test_filters_that_match_but_not_together_say_only_that(db):
    result = run(db, "query", "claims", "--study", "Versant Mega Tracker", "--study", "Versant*", "--min-n", "1e9")
    assert result.stderr == "no claims match\n"


# Progress: bytes and records read of the total, with an ETA, at least once a second.


class SlowIndex:
    """The core's index of a chunk of files, each batch it hands over taking `seconds` more."""

    def __init__(self, index, seconds: float) -> None:
        self.index, self.seconds = index, seconds

    def __iter__(self):
        for item in self.index:
            time.sleep(self.seconds)
            yield item

    def __getattr__(self, name: str):  # bytes_read, records_read, outcomes: the core's own
        return getattr(self.index, name)


def slow_core(monkeypatch, seconds: float, **limits: int) -> None:
    """`archiver.prepare` calls the core with these hand-over limits, its batches handed over slowly."""
    import archiver.prepare
    from archiver import _core

    index_files = _core.index_files

    def slowly(*args, **kwargs):
        return SlowIndex(index_files(*args, **{**kwargs, **limits}), seconds)

    monkeypatch.setattr(archiver.prepare, "index_files", slowly)


@pytest.mark.slow
def test_progress_moves_as_files_are_read_not_only_as_they_commit(tmp_path, monkeypatch):
    slow_core(monkeypatch, 0.5)
    files = sorted(SAMPLES.glob("versant-insights/*"))
    total = sum(path.stat().st_size for path in files)
    args = ["ingest", *map(str, files), "--db", str(tmp_path / "a.duckdb"), "--workers", "1", "--progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith(("ingesting: ", "committing", "finishing"))]
    assert len(lines) >= 3  # a line a second over at least 2.5 seconds, and the last
    assert all(f" of {total / 1000:.1f} kB read " in line for line in lines if " read (" in line), lines
    # small files are read together, so the bytes read move before the files stored do
    reading = [line for line in lines if line.startswith("ingesting: ") and " files stored" in line]
    assert any(" 0 of " in line and not line.startswith("ingesting: 0 B ") for line in reading), lines
    assert f"{len(files)} of {len(files)} files stored" in lines[-1]
    stored = [line for line in lines if " 0 of " not in line]
    assert not [line for line in lines if " left" in line and line not in stored], "no time left before a commit"


class TerminalStderr(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_progress_by_default_only_on_a_terminal(tmp_path, monkeypatch):
    args = ["ingest", str(SAMPLES / "versant-insights"), "--db", str(tmp_path / "a.duckdb")]
    assert "ingesting:" not in CliRunner().invoke(main, args).stderr
    monkeypatch.setattr(sys, "stderr", TerminalStderr())
    assert Progress().enabled
    assert not Progress(False).enabled


def test_progress_line_says_bytes_files_stored_records_and_no_time_left_before_a_commit(monkeypatch):
    """No time left while nothing is committed: the writing's speed is not known (issue 41: reading alone
    said "ETA 0:00:01" with 20 s of commits to come)."""
    clock = iter([100.0, 110.0])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    progress = Progress(False)
    progress.planned(4, 40_000_000)
    progress.read("dumps/a.jsonl", 10_000_000, 1234)
    assert progress.line() == (
        "ingesting: 10.0 MB of 40.0 MB read (25%)  0 of 4 files stored  1,234 records read  "
        "1.0 MB/s  0:00:10 elapsed  dumps/a.jsonl"
    )


@pytest.mark.slow
def test_progress_moves_within_a_file_as_its_records_are_read(tmp_path, monkeypatch):
    slow_core(monkeypatch, 0.15, batch_rows=1)  # a batch a record or so
    lines = (SAMPLES / "versant-insights" / "rpc-v1.jsonl").read_bytes().splitlines(keepends=True)
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(b"".join(lines * (20 // len(lines) + 1)))
    args = ["ingest", str(dump), "--db", str(tmp_path / "a.duckdb"), "--workers", "1", "--progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    during = [line for line in result.stderr.splitlines() if "0 of 1 files stored" in line]
    assert during
    assert all(" 0 B of " not in line for line in during)
    # the bytes read move while the file is read (its last batches are handed over once it is all read)
    reading = [line.split(" of ")[0] for line in during if " (100%) " not in line and "building" not in line]
    assert len(set(reading)) >= 2, during


DOCS = Path(__file__).parent.parent / "docs" / "cli.md"


def test_the_docs_name_every_format_and_exit_code():
    text = DOCS.read_text()
    for name in RENDERERS:
        assert f"`--format {name}`" in text
    for code in (0, 1, 2, 130, 143):
        assert f"\n| {code} | " in text


def test_shell_completion_as_documented():
    assert "_ARCHIVER_COMPLETE=bash_source archiver" in DOCS.read_text()
    result = CliRunner().invoke(main, [], prog_name="archiver", env={"_ARCHIVER_COMPLETE": "bash_source"})
    assert "_archiver_completion" in result.output


@pytest.mark.slow
def test_ingest_summary_as_format_json_or_json(tmp_path):
    args = ["ingest", str(SAMPLES / "versant-insights"), "--db", str(tmp_path / "a.duckdb")]
    assert json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)["files"] > 0
    assert json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)["files_unchanged"] > 0


def test_each_error_carries_its_exit_code_and_http_status():
    """Every error a user can cause says how it ends a command and a web request, declared on the error
    itself (the CLI's handler and the web view's `failure` read it there, no table of their own)."""
    import pkgutil

    import archiver
    from archiver.errors import ArchiverError

    for module in pkgutil.walk_packages(archiver.__path__, "archiver."):
        if not module.name.startswith("archiver._core") and not module.name.endswith("__main__"):
            __import__(module.name)

    def kinds(root):
        for kind in root.__subclasses__():
            yield kind
            yield from kinds(kind)

    declared = {kind.__name__: (kind.exit_code, kind.http_status) for kind in kinds(ArchiverError)}
    assert declared["UsageError"] == (2, 400)
    assert declared["NotFoundError"] == (1, 404)
    assert declared["ArchiveBusyError"] == (1, 503)
    assert declared["InputError"] == declared["VerifyError"] == (1, 400)
    assert {status for _, status in declared.values()} == {400, 404, 503}
    assert {code for code, _ in declared.values()} == {1, 2}


@pytest.mark.slow
def test_bash_completion_quotes_a_name_with_spaces(samples_archive):
    """`--study Vers<TAB>` gave `--study Versant Mega Tracker` unquoted: three arguments (issue 41)."""
    env = {
        "_ARCHIVER_COMPLETE": "bash_complete",
        "COMP_WORDS": f"archiver query claims --db {samples_archive} --study 'Vers",
        "COMP_CWORD": "6",
    }
    result = CliRunner().invoke(main, [], prog_name="archiver", env=env)
    assert result.output.splitlines() == ["plain,'Versant Mega Tracker'"]
    env |= {"COMP_WORDS": f"archiver query claims --db {samples_archive} --column s14r", "COMP_CWORD": "6"}
    assert CliRunner().invoke(main, [], prog_name="archiver", env=env).output.splitlines()[0] == "plain,s14r5"


def test_counts_for_people_have_thousands_separators():
    """ "26129 claims" read as a code, not a count (issue 41)."""
    from archiver.cli import render_summary
    from archiver.render.terminal import counted

    assert counted(26129, "claim") == "26,129 claims"
    summary = SimpleNamespace(
        files=1200, files_unchanged=0, files_aliased=0, records=26129, duplicates_skipped=0, quarantined=0,
        tasks=1, results=2, copies=3, parts=4, citations=5, claims=26129, agent_cards=0, error_responses=0,
        archive_files_skipped=0, folders_unreadable=[], claimed_elsewhere=[], leases_taken_over=[], commit_retries=0,
    )  # fmt: skip
    shown = render_summary(summary)
    assert "files 1,200 " in shown
    assert "citation Parts 5  claims 26,129 (in stored copies)" in shown  # "citations" was 88, 59 or 3


def test_top_level_help_cuts_no_summary():
    """`archiver --help` cut every command's summary with "..." (issue 41): each has a short_help that fits,
    as have the commands of `db` and `query`."""
    for group, args in ((main, []), (main.commands["db"], ["db"]), (main.commands["query"], ["query"])):
        shown = CliRunner().invoke(main, [*args, "--help"], terminal_width=80).output
        commands = shown.split("Commands:\n", 1)[1].splitlines()
        assert len(commands) == len([c for c in group.commands.values() if not c.hidden])
        assert not [line for line in commands if line.endswith("...")]
        if group is main:
            assert "  stats   How many results are validly cited, and the archive's counts." in commands
