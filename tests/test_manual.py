"""`archiver docs TOPIC` prints the manual's pages (issue 28, item 7): the help texts point at pages an
installed package can reach, and the pages built into the core are the checkout's."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from archiver._core import docs as built_in
from archiver.cli import main
from archiver.manual import pages, title

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_core_carries_every_page_of_the_checkout():
    """Each page by name and title (its text is the file's as of the last build of the core: editing a page
    needs no build for this test, adding one does)."""
    checkout = {path.name: title(path.read_text(encoding="utf-8")) for path in sorted(DOCS.glob("*.md"))}
    assert {name: title(text) for name, text in built_in()} == checkout


def test_docs_lists_the_pages_and_prints_one():
    listed = CliRunner().invoke(main, ["docs"])
    assert listed.exit_code == 0
    assert "verify        Verify: re-derive every cited number from the data layer\n" in listed.output
    assert len(listed.output.splitlines()) == len(pages())
    page = CliRunner().invoke(main, ["docs", "verify"])
    assert page.exit_code == 0
    assert page.output == (DOCS / "verify.md").read_text(encoding="utf-8")
    assert CliRunner().invoke(main, ["docs", "cli.md"]).output == (DOCS / "cli.md").read_text(encoding="utf-8")


def test_an_unknown_topic_names_the_pages():
    result = CliRunner().invoke(main, ["docs", "nope"])
    assert result.exit_code == 2
    assert "Invalid value for TOPIC: no page 'nope'; the pages: audit, cli," in result.output


def test_no_help_text_points_at_a_file_an_installed_package_lacks():
    for command in main.commands.values():
        text = command.help or ""
        for sub in getattr(command, "commands", {}).values():
            text += sub.help or ""
        assert "docs/" not in text, command.name
    assert "archiver docs cli" in main.help


def test_every_command_people_run_shows_examples():
    names = ["ingest", "show", "export", "audit", "sql", "verify", "serve", "record", "docs"]
    commands = [main.commands[name] for name in names] + list(main.commands["query"].commands.values())
    for command in commands:
        shown = CliRunner().invoke(main, [*_path(command), "--help"]).output
        assert "\n  Examples:\n    archiver " in shown, command.name


def _path(command) -> list[str]:
    return ["query", command.name] if command.name in main.commands["query"].commands else [command.name]


def test_a_page_goes_to_a_pager(monkeypatch):
    """`archiver docs verify` printed raw Markdown down a terminal (issue 41): click's pager, which writes
    plain when the output is no terminal (the test above)."""
    import click

    paged = []
    monkeypatch.setattr(click, "echo_via_pager", paged.append)
    CliRunner().invoke(main, ["docs", "verify"])
    assert paged == [(DOCS / "verify.md").read_text(encoding="utf-8").removesuffix("\n")]
