"""`archiver verify`, second round (issue 29, item 4): everything an extractor reads is fingerprinted, the
files declared as its `inputs` (globs) and the modules it imports while it runs (an import hook); a change
to any of them makes its verdicts stale, and `verify --status` names the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.cli import main
from tests.test_verify import ingest, outcomes, plain_cite

EXTRACTORS = """
import importlib
import json
import os

HERE = os.path.dirname(__file__)


def from_json(relation, column, context):
    with open(os.path.join(HERE, "lookups", "scale.json")) as handle:
        scale = json.load(handle)["scale"]
    return {"n": scale * relation.query("t", "SELECT count(*) FROM t").fetchone()[0]}


def from_module(relation, column, context):
    scales = importlib.import_module("scales_" + context.study.lower())
    return {"n": scales.SCALE * relation.query("t", "SELECT count(*) FROM t").fetchone()[0]}
"""

LAYER = """
[verify]
timeout = 30

[[tables]]
name = "t"
path = "t.csv"

[extractors.from_json]
module = "extractors.py"
inputs = ["lookups/*.json"]

[extractors.from_module]
module = "extractors.py"
"""


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    (tmp_path / "t.csv").write_text("q1\n1\n1\n1\n1\n")
    (tmp_path / "extractors.py").write_text(EXTRACTORS)
    (tmp_path / "lookups").mkdir()
    (tmp_path / "lookups" / "scale.json").write_text(json.dumps({"scale": 1}))
    (tmp_path / "scales_s.py").write_text("SCALE = 1\n")
    path = tmp_path / "archiver-data-layer.toml"
    path.write_text(LAYER)
    return path


def cite(function: str) -> dict:
    return plain_cite(function)


def stale(archive) -> dict[str, tuple[bool, str | None]]:
    return {v.task_id: (v.stale, v.stale_because) for v in archive.verdicts().verdicts}


@pytest.mark.slow
def test_a_change_to_a_declared_input_makes_the_verdict_stale_and_is_named(archive, write, layer):
    ingest(archive, write, {"json": ({"n": 4}, cite("from_json")), "module": ({"n": 4}, cite("from_module"))})
    assert {task: verdict[0] for task, verdict in outcomes(archive.verify()).items()} == {
        "json": "reproduced",
        "module": "reproduced",
    }
    assert stale(archive) == {"json": (False, None), "module": (False, None)}
    (layer.parent / "lookups" / "scale.json").write_text(json.dumps({"scale": 100}))
    assert stale(archive) == {"json": (True, "lookups/scale.json changed"), "module": (False, None)}
    (layer.parent / "lookups" / "other.json").write_text("{}")
    assert stale(archive)["json"] == (True, "lookups/scale.json changed; lookups/other.json is new")


@pytest.mark.slow
def test_a_change_to_a_module_imported_at_run_time_makes_the_verdict_stale(archive, write, layer, tmp_path):
    ingest(archive, write, {"json": ({"n": 4}, cite("from_json")), "module": ({"n": 4}, cite("from_module"))})
    archive.verify()
    (layer.parent / "scales_s.py").write_text("SCALE = 100\n")
    assert stale(archive) == {"json": (False, None), "module": (True, "scales_s.py changed")}
    archive.close()
    db = str(tmp_path / "archive.duckdb")
    shown = CliRunner().invoke(main, ["verify", "--status", "--db", db])
    assert "with a data layer that has changed since (scales_s.py changed): STALE" in shown.output
    again = CliRunner().invoke(main, ["verify", "--db", db, "--format", "json"])
    found = {v["task_id"]: (v["verdict"], v["previous_stale"]) for v in json.loads(again.output)["verdicts"]}
    assert found == {"json": ("reproduced", False), "module": ("differs", True)}
