"""Venvs of other A2A stacks for the tests that run them: made once with pip under a cache folder, and
skipped, with pip's reason, where pip cannot install them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("ARCHIVER_TEST_CACHE", Path.home() / ".cache" / "archiver-tests"))


def cached_python(name: str, packages: list[str], key: str | None = None) -> str:
    """The python of the venv `CACHE/<name>-<hash of key, or of packages>` holding `packages`, made the first
    time it is asked for (built aside and renamed, so a venv half made is never taken)."""
    digest = hashlib.sha256((key or " ".join(packages)).encode()).hexdigest()[:8]
    venv = CACHE / f"{name}-{digest}"
    python = venv / "bin" / "python"
    if not python.exists():
        building = CACHE / f"{venv.name}.building-{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
        installed = subprocess.run(
            [str(building / "bin" / "pip"), "install", "-q", *packages], capture_output=True, text=True
        )
        if installed.returncode != 0:
            pytest.skip(f"{packages[0]} could not be installed: {installed.stderr.strip()[-300:]}")
        building.rename(venv)
    return str(python)
