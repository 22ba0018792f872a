"""`archiver verify`, second round (issue 29, item 6): extractor results as pandas and numpy return them, and
Decimal; NaN and infinities reported as such, not as a missing number."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from archiver.verify.values import plain
from tests.test_verify import ingest, outcomes, plain_cite

EXTRACTORS = """
from decimal import Decimal


def share(relation, column, context):
    import numpy
    return {"share": numpy.float64(relation.query("t", f'SELECT avg("{column}") FROM t').fetchone()[0])}


def shares(relation, column, context):
    import numpy
    return {"shares": numpy.array([0.25, 0.5]), "n": numpy.int64(4)}


def series(relation, column, context):
    return relation.query("t", f'SELECT avg("{column}") AS share, count(*) AS n FROM t').df().iloc[0]


def frame(relation, column, context):
    return relation.query("t", f'SELECT avg("{column}") AS share, count(*) AS n FROM t').df()


def decimal(relation, column, context):
    return {"share": Decimal("0.5")}


def nan(relation, column, context):
    return {"share": float("nan")}


def pandas_nan(relation, column, context):
    return relation.query("t", f'SELECT avg("{column}") FILTER (WHERE false) AS share FROM t').df()


def infinite(relation, column, context):
    import numpy
    return {"share": numpy.inf}
"""

FUNCTIONS = ("share", "shares", "series", "frame", "decimal", "nan", "pandas_nan", "infinite")


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    pytest.importorskip("pandas")
    (tmp_path / "t.csv").write_text("q1\n1\n0\n1\n0\n")
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    declared = "\n".join(f'{name} = "extractors.py:{name}"' for name in FUNCTIONS)
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(f'[verify]\ntimeout = 30\n\n[[tables]]\nname = "t"\npath = "t.csv"\n\n[extractors]\n{declared}\n')
    return path


def cite(function: str) -> dict:
    return plain_cite(function)


@pytest.mark.slow
def test_numpy_pandas_and_decimal_results_are_compared(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "share": ({"share": 0.5}, cite("share")),
            "shares": ({"shares": [0.25, 0.5], "n": 4}, cite("shares")),
            "series": ({"share": 0.5, "n": 4}, cite("series")),
            "frame": ({"share": 0.5, "n": 4}, cite("frame")),
            "decimal": ({"share": 0.5}, cite("decimal")),
        },
    )
    found = outcomes(archive.verify())
    tasks = ("share", "shares", "series", "frame", "decimal")
    assert {task: verdict[:2] for task, verdict in found.items()} == dict.fromkeys(tasks, ("reproduced", None))


@pytest.mark.slow
def test_nan_and_infinities_are_reported_as_such(archive, write, layer):
    ingest(
        archive,
        write,
        {
            "nan": ({"share": 0.5}, cite("nan")),
            "pandas-nan": ({"share": 0.5}, cite("pandas_nan")),
            "infinite": ({"share": 0.5}, cite("infinite")),
        },
    )
    report = archive.verify()
    found = outcomes(report)
    assert found["nan"][:2] == (
        "differs",
        "1 of 1 claims differ; /share: claimed 0.5, re-derived NaN (the extractor returned NaN)",
    )
    assert found["pandas-nan"][:2] == found["nan"][:2]
    assert found["infinite"][1].endswith("re-derived Infinity (the extractor returned Infinity)")
    differences = {v.task_id: v.differences for v in report.verdicts}
    assert differences["nan"] == [
        {"pointer": "/share", "claimed": 0.5, "rerun": "NaN", "note": "the extractor returned NaN"}
    ]


def test_plain_values():
    numpy = pytest.importorskip("numpy")
    assert plain({"a": numpy.float32(0.5), 1: (Decimal("2"), Decimal("2.5"), numpy.bool_(True))}) == {
        "a": 0.5,
        "1": [2, 2.5, True],
    }
    with pytest.raises(TypeError, match=r"builtins\.set is not JSON"):
        plain({1, 2})
