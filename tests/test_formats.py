"""The output formats: named once (`archiver.render.formats`), offered by the CLI as named there, and
each renderer's exact text for the same small listing."""

from __future__ import annotations

import io

import click
import pytest

from archiver.cli import main
from archiver.query.listing import Listing
from archiver.render.formats import RENDERERS, formats_for, write

ROWS = [
    {"study": "Versant", "n": 1210, "share": 0.42, "valid": True, "warnings": ["small cell"], "note": None},
    {"study": 'Santé, "2026"', "n": 7, "share": 1.0, "valid": False, "warnings": [], "note": "a\nb"},
]
FIELDS = ("study", "n", "share", "valid", "warnings", "note")


def rendered(fmt: str, rows=ROWS, **listing) -> str:
    out = io.BytesIO()
    assert write(Listing(FIELDS, iter(rows), **listing), fmt, out) == len(rows)
    return out.getvalue().decode()


@pytest.mark.parametrize(
    ("command", "kind"),
    [(["query", "claims"], "rows"), (["sql"], "rows"), (["audit"], "findings"), (["verify"], "verdicts")],
)
def test_the_cli_offers_the_formats_named_once(command, kind):
    context = click.Context(main)
    for name in command:
        context = click.Context(context.command.get_command(context, name), parent=context)
    (option,) = [p for p in context.command.params if p.name == "fmt"]
    assert tuple(option.type.choices) == formats_for(kind)


def test_every_format_renders_something():
    assert set(RENDERERS) == {"table", "json", "jsonl", "csv", "tsv", "markdown", "sarif"}
    assert all(formats_for(kind) for kind in ("rows", "findings", "verdicts"))


def test_json_is_a_bare_array_of_compact_rows():
    assert rendered("json") == (
        "[\n"
        '{"study":"Versant","n":1210,"share":0.42,"valid":true,"warnings":["small cell"],"note":null},\n'
        '{"study":"Santé, \\"2026\\"","n":7,"share":1.0,"valid":false,"warnings":[],"note":"a\\nb"}\n'
        "]\n"
    )
    assert rendered("json", rows=[]) == "[]\n"


def test_json_of_named_items_is_indented_with_its_summary():
    text = rendered("json", rows=ROWS[:1], name="verdicts", summary={"citations": 1})
    assert text == (
        "{\n"
        '  "verdicts": [\n'
        "    {\n"
        '      "study": "Versant",\n'
        '      "n": 1210,\n'
        '      "share": 0.42,\n'
        '      "valid": true,\n'
        '      "warnings": [\n'
        '        "small cell"\n'
        "      ],\n"
        '      "note": null\n'
        "    }\n"
        "  ],\n"
        '  "summary": {\n'
        '    "citations": 1\n'
        "  }\n"
        "}\n"
    )
    assert rendered("json", rows=[], name="verdicts", summary={}) == '{\n  "verdicts": [],\n  "summary": {}\n}\n'


def test_jsonl_is_a_row_a_line():
    assert rendered("jsonl").splitlines()[1] == (
        '{"study":"Santé, \\"2026\\"","n":7,"share":1.0,"valid":false,"warnings":[],"note":"a\\nb"}'
    )
    assert rendered("jsonl", rows=[]) == ""


def test_csv_quotes_and_spells_values_as_json_would():
    assert rendered("csv") == (
        "study,n,share,valid,warnings,note\n"
        'Versant,1210,0.42,true,"[""small cell""]",\n'
        '"Santé, ""2026""",7,1.0,false,[],"a\nb"\n'
    )


def test_table_aligns_columns_or_writes_each_items_own_lines():
    assert rendered("table") == (
        "study          n     share  valid  warnings    note\n"
        "-------------  ----  -----  -----  ----------  ----\n"
        "Versant        1210   0.42  yes    small cell\n"
        'Santé, "2026"     7      1  no                 a b\n'
        "(2 rows)\n"
    )
    own = rendered("table", record=lambda row: f"{row['study']}: {row['n']}\n", footer=lambda: "done\n")
    assert own == 'Versant: 1210\nSanté, "2026": 7\ndone\n'


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        write(Listing(FIELDS, []), "yaml", io.BytesIO())
