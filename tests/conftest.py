"""Shared fixtures: a fresh archive file per test, and a writer of input files."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from archiver.archive import Archive


@pytest.fixture
def archive(tmp_path: Path):
    with Archive.open(str(tmp_path / "archive.duckdb")) as opened:
        yield opened


@pytest.fixture
def write(tmp_path: Path):
    """write(name, content) -> path. Content: bytes, str, a list of objects (JSON Lines) or an object."""

    def _write(name: str, content, compress: bool = False) -> str:
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, list):
            data = b"".join(orjson.dumps(item) + b"\n" for item in content)
        elif isinstance(content, dict):
            data = orjson.dumps(content)
        elif isinstance(content, str):
            data = content.encode()
        else:
            data = content
        path.write_bytes(gzip.compress(data) if compress else data)
        return str(path)

    return _write
