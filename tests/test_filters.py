"""The filters are declared once (`archiver.query.filters.FILTERS`, issue 30 item 2): the command line's
options, the search form and the Python API's keywords agree; a shell completes a text filter's values
from the archive (issue 28 item 6)."""

from __future__ import annotations

from dataclasses import fields

import click
import pytest
from click.shell_completion import BashComplete
from starlette.datastructures import QueryParams

from archiver.cli import main
from archiver.query.filters import FILTERS
from archiver.query.selection import Selection
from archiver.serve import form
from tests.transcripts import jsonrpc_result, v1_cited_parts, v1_task


def test_the_command_line_the_form_and_the_api_take_the_same_filters():
    assert [item.name for item in FILTERS] == [f.name for f in fields(Selection)]
    command = main.commands["query"].commands["claims"]
    options = {p.name: p for p in command.params if isinstance(p, click.Option)}
    for item in FILTERS:
        option = options[item.name]
        assert option.opts[0] == item.option
        assert option.help == item.help
        assert option.multiple == (item.kind in ("text", "source"))
        assert bool(option.secondary_opts) == (item.kind == "choice")
    asked = QueryParams("study=A&study=B&since=2026-01-01&min_n=5&valid=no&source=x.jsonl&task=")
    assert form.selection(asked) == Selection.of(
        study=["A", "B"], since="2026-01-01", min_n=5.0, valid=False, source=["x.jsonl"]
    )
    assert [item.name for item, _ in form.fields(QueryParams(""))] == [item.name for item in FILTERS]
    assert Selection.of(**{item.name: None for item in FILTERS}) == Selection()


def completions(args: list[str], incomplete: str) -> list[tuple[str, str]]:
    found = BashComplete(main, {}, "archiver", "_ARCHIVER_COMPLETE").get_completions(args, incomplete)
    return [(item.value, item.type) for item in found]


@pytest.mark.slow
def test_a_shell_completes_values_from_the_archive(archive, write, tmp_path, monkeypatch):
    tasks = [jsonrpc_result({"task": v1_task(f"task-{i}", v1_cited_parts())}) for i in (1, 2)]
    archive.ingest([write("t.jsonl", tasks)])
    path = archive.path
    archive.close()
    assert completions(["query", "claims", "--db", path, "--study"], "Ver") == [("Versant Mega Tracker", "plain")]
    assert completions(["query", "claims", "--db", path, "--task"], "task-") == [
        ("task-1", "plain"),
        ("task-2", "plain"),
    ]
    assert completions(["audit", "--db", path, "--column"], "s14") == [("s14r5", "plain")]
    assert completions(["query", "claims", "--db", path, "--study"], "Nothing") == []
    monkeypatch.setenv("ARCHIVER_DB", path)
    assert completions(["query", "citations", "--period"], "W6") == [("W6 (April 2026)", "plain")]
    assert completions(["query", "claims", "--db", str(tmp_path / "none.duckdb"), "--study"], "") == []
    assert completions(["query", "claims", "--source"], "sam") == [("sam", "file")]
    assert completions(["show", "--db", path], "task-") == [("task-1", "plain"), ("task-2", "plain")]
    assert completions(["show", "--db", path], "ctx") == [("ctx-1", "plain")]
