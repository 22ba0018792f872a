"""`archiver verify`, second round (issue 29, item 2): numbers stated as strings ("35%", "1,210", "€1,250.50",
"48,9 %") are claims with their unit, compared like any other, and `show` prints the verdict beside each."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver.cite.stated import StatedNumber, stated
from tests.test_verify import ingest, outcomes, plain_cite

EXTRACTORS = """
def answer(relation, column, context):
    share, n = relation.query("t", f'SELECT avg("{column}"), count(*) FROM t').fetchone()
    return {"share": share, "n": n, "spend": 1250.5, "weight": 12.5, "label": "48.9%"}
"""


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    # 45 of 92 answer 1: a share of 0.48913...
    (tmp_path / "t.csv").write_text("q1\n" + "1\n" * 45 + "0\n" * 47)
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text('[verify]\ntimeout = 30\n\n[[tables]]\nname = "t"\npath = "t.csv"\n\n[extractors]\n')
    path.write_text(path.read_text() + 'answer = "extractors.py:answer"\n')
    return path


def cite() -> dict:
    return plain_cite("answer", n=92)


@pytest.mark.slow
def test_a_percent_string_is_compared_and_show_prints_its_verdict(archive, write, layer):
    ingest(archive, write, {"wrong": ({"share": "35%", "n": 92}, cite())})
    found = outcomes(archive.verify())
    assert found["wrong"][:2] == (
        "differs",
        "1 of 2 claims differ; /share: claimed '35%', re-derived 48.9%",
    )
    shown = archive.render("wrong")
    assert "covers 2 numbers: share, n" in shown
    assert "RE-RUN DIFFERS, over all rows: 92" in shown
    assert "\n       share: the agent wrote 35%, the data layer re-derives 48.9%\n" in shown


@pytest.mark.slow
def test_a_result_whose_only_number_is_a_string_is_compared(archive, write, layer):
    ingest(archive, write, {"only": ({"share": "48.9%"}, cite()), "fraction": ({"share": "0.489"}, cite())})
    found = outcomes(archive.verify())
    assert found["only"][:2] == ("reproduced", None)
    assert found["fraction"][:2] == ("reproduced", None)
    assert "re-run: reproduced, over all rows: 92" in archive.render("only")


@pytest.mark.slow
def test_every_spelling_is_compared(archive, write, layer):
    right = {"share": "48,9 %", "n": "92 respondents", "spend": "€1,250.50", "weight": "12.5 kg", "label": "48,9 %"}
    wrong = {"share": "49.9 %", "n": "1,092", "spend": "1.251,50 €", "weight": "125 kg", "label": "4.89%"}
    ingest(archive, write, {"right": (right, cite()), "wrong": (wrong, cite())})
    report = archive.verify()
    found = outcomes(report)
    assert found["right"][:2] == ("reproduced", None)
    differing = {v.task_id: [(d["pointer"], d["claimed"]) for d in v.differences] for v in report.verdicts}
    assert differing["wrong"] == [
        ("/label", "4.89%"),
        ("/n", "1,092"),
        ("/share", "49.9 %"),
        ("/spend", "1.251,50 €"),
        ("/weight", "125 kg"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("35%", StatedNumber("35", 35.0, "%")),
        ("48,9 %", StatedNumber("48.9", 48.9, "%")),
        ("1,210", StatedNumber("1210", 1210.0, None)),
        ("1.250.000", StatedNumber("1250000", 1250000.0, None)),
        ("1.250,5", StatedNumber("1250.5", 1250.5, None)),
        ("€1,250.50", StatedNumber("1250.50", 1250.5, "€")),
        ("1 250 €", StatedNumber("1250", 1250.0, "€")),
        ("EUR 1,250", StatedNumber("1250", 1250.0, "EUR")),
        ("12.5 kg", StatedNumber("12.5", 12.5, "kg")),
        ("\u22123.5%", StatedNumber("-3.5", -3.5, "%")),  # a minus sign
        ("0,35", StatedNumber("0.35", 0.35, None)),
        ("2026", None),  # a bare integer: a label
        ("2026-04-01", None),
        ("18-34", None),
        ("Q1 2026", None),
        ("12,34,567", None),
        ("1.2.3", None),
    ],
)
def test_stated_numbers(text, expected):
    assert stated(text) == expected
