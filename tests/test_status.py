"""What is wrong shows in the tables people read (issue 28, item 4): the claims and citations listings carry
a `status` (uncited, invalid with the first problem, type lost, valid, and the latest verdict), coloured on
a terminal with the audit's severities and `show`'s labels, never when `NO_COLOR` is set or when piped."""

from __future__ import annotations

import io

import pytest

from archiver.render import table
from archiver.render.findings import listing
from tests.transcripts import citation, jsonrpc_result, v1_cited_parts, v1_task

RED, YELLOW, RESET = "\x1b[31m", "\x1b[33m", "\x1b[0m"


class Terminal(io.BytesIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def statuses(archive, write):
    stripped = [{"data": {"share": 0.3}}, {"data": citation(period="W7")}]  # its media type lost
    archive.ingest(
        [
            write(
                "t.jsonl",
                [
                    jsonrpc_result({"task": v1_task("ok", v1_cited_parts())}),
                    jsonrpc_result({"task": v1_task("bad", v1_cited_parts(base={"name": "All", "n": 0}))}),
                    jsonrpc_result({"task": v1_task("bare", [{"data": {"share": 0.5}}])}),
                    jsonrpc_result({"task": v1_task("lost", stripped)}),
                ],
            )
        ]
    )
    return archive


@pytest.mark.slow
def test_claims_and_citations_say_what_is_wrong(statuses):
    found = {(row["task_id"], row["pointer"]): row["status"] for row in statuses.claims()}
    assert found == {
        ("ok", "/share"): "valid",
        ("ok", "/n"): "valid",
        ("bad", "/share"): "invalid: base.n is 0, not positive",
        ("bad", "/n"): "invalid: base.n is 0, not positive",
        ("bare", "/share"): "uncited",
        ("lost", "/share"): "type lost",
    }
    assert sorted(row["status"] for row in statuses.citations()) == [
        "invalid: base.n is 0, not positive",
        "type lost",
        "valid",
    ]
    assert "status" in statuses.claims().table_fields


@pytest.mark.slow
def test_a_terminal_sees_the_status_in_colour_and_no_color_turns_it_off(statuses, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = Terminal()
    table.write(statuses.claims(), out, width=200)
    shown = out.getvalue().decode()
    assert f"{RED}invalid: base.n is 0, not positive{RESET}" in shown
    assert f"{RED}uncited{RESET}" in shown
    assert f"{YELLOW}type lost{RESET}" in shown
    monkeypatch.setenv("NO_COLOR", "1")
    out = Terminal()
    table.write(statuses.claims(), out, width=200)
    assert "\x1b" not in out.getvalue().decode()
    piped = io.BytesIO()
    monkeypatch.delenv("NO_COLOR")
    table.write(statuses.claims(), piped)
    assert "\x1b" not in piped.getvalue().decode()


@pytest.mark.slow
def test_a_narrow_terminal_cuts_other_columns_before_the_status(statuses, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    out = Terminal()
    table.write(statuses.claims(), out, width=130)
    shown = out.getvalue().decode()
    assert "invalid: base.n is 0, not positive" in shown
    assert "Versant Mega …" in shown
    assert "(6 rows; empty, not shown: unit)" in shown


@pytest.mark.slow
def test_audit_errors_and_show_labels_are_coloured(statuses, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = Terminal()
    with statuses.audited() as audit:
        table.write(listing(audit), out, width=200)
    first_lines = [line for line in out.getvalue().decode().splitlines() if line.startswith("\x1b")]
    assert first_lines
    assert all(line.startswith((RED + "error", YELLOW + "warning")) for line in first_lines)
    shown = statuses.render("bad", colour=True)
    assert f"{RED}     INVALID: base.n is 0, not positive{RESET}" in shown
    assert "\x1b" not in statuses.render("bad")


@pytest.mark.slow
def test_every_count_of_stats_names_what_it_counts(statuses):
    from click.testing import CliRunner

    from archiver.cli import main
    from archiver.store.views import STAT_QUERIES, STAT_WORDS

    assert set(STAT_WORDS) == set(STAT_QUERIES)
    path = statuses.path
    statuses.close()
    shown = CliRunner().invoke(main, ["stats", "--db", path, "--csv"]).output.splitlines()
    assert shown[0] == "name,value,counts"
    assert "claims,6,claims in stored copies (one in two copies counts twice; audit and query count it once)" in shown
