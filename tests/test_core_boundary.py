"""The core's boundary is typed once, in `archiver/_core/_core.pyi`: mypy's stubtest holds the stub to the
compiled extension (every name, every parameter), and mypy holds the package's callers to the stub. The
extension exports what the package uses, nothing only a test calls. The names the archive's tables share
with the core come from the core."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from archiver import _core
from archiver.archive import Archive
from archiver.store.tables import INDEX_TABLES, RECORD_YIELDS
from tests.transcripts import SAMPLES

ROOT = Path(__file__).resolve().parent.parent
CALLERS = sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "archiver").rglob("*.py")
    if "_core" not in path.parts and any(f"from {dots}_core import" in path.read_text() for dots in (".", ".."))
)


def imported_from_the_core() -> set[str]:
    """The names the package's modules import from the core (`from .._core import NAME`)."""
    names = set()
    for path in (ROOT / "archiver").rglob("*.py"):
        if "_core" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "_core":
                names |= {alias.name for alias in node.names}
    return names


def test_the_core_exports_only_what_the_package_uses():
    """Each function and constant of the extension is imported by the package (its classes come back from
    those functions); a stage's behaviour is tested in Rust, not through a function only a test calls."""
    exported = {name for name in dir(_core._core) if not name.startswith("_")}
    functions = {name for name in exported if not isinstance(getattr(_core._core, name), type)}
    assert functions - imported_from_the_core() == set()


def mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_stub_is_the_extension_name_for_name_and_parameter_for_parameter():
    checked = mypy("mypy.stubtest", "archiver._core._core")
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_the_package_calls_the_core_as_the_stub_types_it():
    assert "archiver/prepare.py" in CALLERS
    checked = mypy("mypy", "--follow-imports=silent", "--ignore-missing-imports", "--no-incremental", *CALLERS)
    assert checked.returncode == 0, checked.stdout


def test_the_tables_the_core_writes_are_the_archive_s(tmp_path):
    assert tuple(_core.INDEX_TABLES) == INDEX_TABLES
    assert tuple(_core.RECORD_YIELDS) == RECORD_YIELDS
    with Archive.open(str(tmp_path / "a.duckdb")) as archive:
        archive.ingest([str(SAMPLES)])
        tables = {name for (name,) in archive.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        yielded = {kind for (kind,) in archive.con.execute("SELECT DISTINCT yields FROM records").fetchall()}
    assert set(INDEX_TABLES) <= tables
    assert yielded <= set(RECORD_YIELDS)
    assert {"result", "agent-card", "status", "user-message"} <= yielded
