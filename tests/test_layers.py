"""The package's layers (`[tool.importlinter]` in pyproject.toml, issue 30 item 3): `lint-imports` keeps them,
and an upward import, even one inside a function, breaks them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import archiver.version

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]


def lint(root: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(LINT, cwd=root, env=environment, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_layers_hold():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in result.stdout


@pytest.mark.slow
def test_inside_ingest_the_summary_importing_the_follower_breaks_its_layers(tmp_path):
    """`archiver.ingest` has layers of its own: a summary that imported the follower breaks them."""
    shutil.copytree(
        ROOT / "archiver", tmp_path / "archiver", ignore=shutil.ignore_patterns("core", "*.so", "__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    summary = tmp_path / "archiver" / "ingest" / "summary.py"
    summary.write_text(summary.read_text() + "\n\nfrom .follow import Follower  # noqa: E402\n")
    result = lint(tmp_path)
    assert result.returncode == 1
    assert "archiver.ingest.summary is not allowed to import archiver.ingest.follow" in result.stdout


@pytest.mark.slow
def test_an_upward_import_breaks_them(tmp_path):
    """The Python files of the package, copied, with a reader that imports the API inside a function."""
    shutil.copytree(
        ROOT / "archiver", tmp_path / "archiver", ignore=shutil.ignore_patterns("core", "*.so", "__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    reader = tmp_path / "archiver" / "read" / "containers.py"
    reader.write_text(
        reader.read_text() + "\n\ndef _upward():\n    from ..archive import Archive\n\n    return Archive\n"
    )
    result = lint(tmp_path)
    assert result.returncode == 1
    assert "archiver.read is not allowed to import archiver.archive" in result.stdout
    assert "archiver.read.containers -> archiver.archive" in result.stdout


def test_the_version_is_the_projects():
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "(.*)"$', project, re.M).group(1) == archiver.version.__version__
