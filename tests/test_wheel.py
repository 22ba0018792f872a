"""A plain install from a built wheel works: the compiled core ships inside the package, the migrations
built into it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.transcripts import ROOT, jsonrpc_result, v1_cited_parts, v1_task

pytest.importorskip("maturin", reason="building the wheel needs maturin (pip install '.[test]')")


@pytest.mark.slow
def test_install_from_built_wheel_ingests(tmp_path, write):
    dist = tmp_path / "dist"
    # maturin's build backend runs the `maturin` command: the one installed beside this interpreter
    builder = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        env=builder,
    )
    wheel = next(dist.glob("a2a_archiver-*.whl"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert next((target / "archiver" / "_core").glob("_core.*.so")).is_file()  # the compiled core
    assert not (target / "migrations").exists()  # built into the core, not a folder beside the package
    assert (target / "archiver" / "serve" / "static" / "serve.css").is_file()  # archiver serve's stylesheet
    assert (target / "archiver" / "serve" / "templates" / "base.html").is_file()
    source = write("t.jsonl", [jsonrpc_result({"task": v1_task("wheel", v1_cited_parts())})])
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            ("import archiver, sys; print(archiver.__file__, file=sys.stderr); from archiver.cli import main; main()"),
            "ingest",
            source,
            "--db",
            str(tmp_path / "w.duckdb"),
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert Path(run.stderr.splitlines()[0]).is_relative_to(target)
    assert json.loads(run.stdout)["citations"] == 1
