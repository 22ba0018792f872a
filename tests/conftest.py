"""Shared fixtures: a fresh archive file per test, a writer of input files, and the samples' archive
(ingested once a run, each test file taking a copy of its own)."""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

import orjson
import pytest

from archiver import redact
from archiver.archive import Archive

pytest_plugins = ("tests.lakes",)  # the lake tests' fixtures (tests/test_lake_*.py)

# The test modules' rewritten bytecode is kept between runs even where PYTHONDONTWRITEBYTECODE is set (as it
# is on this project's machines): rewriting their asserts again cost every run 10 s and more of collection.
# Subprocesses the tests start keep the environment as it is.
sys.dont_write_bytecode = False


@pytest.fixture
def archive(tmp_path: Path):
    with Archive.open(str(tmp_path / "archive.duckdb")) as opened:
        yield opened


@pytest.fixture(scope="session")
def samples_archive(tmp_path_factory) -> Path:
    """`sample_transcripts/` ingested once for the whole run (one worker); not to be written: take a copy
    (`samples_copy`)."""
    from tests.transcripts import SAMPLES

    db = tmp_path_factory.mktemp("samples-once") / "samples.duckdb"
    with Archive.open(str(db)) as archive:
        summary = archive.ingest([str(SAMPLES)], workers=1)
    assert summary.quarantined == 0, summary.problems
    assert not Path(f"{db}.wal").exists()
    return db


@pytest.fixture(scope="module")
def samples_copy(samples_archive: Path, tmp_path_factory) -> str:
    """A copy of the samples' archive for one test file, to read or write as it likes."""
    copy = tmp_path_factory.mktemp("samples") / "archive.duckdb"
    shutil.copyfile(samples_archive, copy)
    return str(copy)


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


@pytest.fixture(autouse=True)
def _secrets_told_forgotten():
    """The secrets a test told the one redaction (`archiver.redact.known`: a store's password, a token) are
    forgotten after it, so that a later test in the same worker reads its own words unmasked."""
    told = set(redact._told)
    yield
    redact._told.clear()
    redact._told.update(told)
