"""What the lake tests share (`tests/test_lake_*.py`): a lake of each kind of catalog, a throwaway PostgreSQL
for its catalog, the command line, and writers in processes of their own. Registered as a plugin by
`tests/conftest.py`, so that each lake test file reads its fixtures from here.

Catalogs: SQLite and a DuckDB file always; PostgreSQL when Debian's `postgresql` package is installed
(a throwaway cluster on a free loopback port, started once per pytest worker and stopped by its pid). Each
test runs on the kinds of catalog where the archiver's behaviour differs (`on(...)`, with the reason beside
it), not on every kind: a test of the leases' policy, say, needs one lake that admits several writers.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.store.backend import locate
from tests import servers
from tests.stored import WHOLE_RECORDS
from tests.transcripts import jsonrpc_result, v1_cited_parts, v1_task

ROOT = Path(__file__).resolve().parent.parent
EVERY_CATALOG = ("sqlite", "duckdb", "postgres")
SHARED_CATALOGS = ("sqlite", "postgres")
"""The catalogs that admit several writers (a DuckDB file admits one process)."""


def on(*catalogs: str):
    """Run the test on a lake (its `lake` argument) of each of these kinds of catalog."""
    return pytest.mark.parametrize("lake", catalogs, indirect=True)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster on 127.0.0.1; yields a function making a fresh database's DSN."""
    servers.skip_without("postgres")
    made = []
    with servers.postgres() as server:

        def database() -> str:
            name = f"lake{len(made)}"
            server.createdb(name)
            made.append(name)
            return f"dbname={name} host=127.0.0.1 port={server.port} user=postgres"

        yield database


@pytest.fixture
def lake_environment(tmp_path_factory, monkeypatch):
    """The lake extensions installed once per worker, and no archive named by the environment."""
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path_factory.getbasetemp() / "duckdb-extensions"))
    monkeypatch.delenv("ARCHIVER_DB", raising=False)
    monkeypatch.delenv("ARCHIVER_DATA_PATH", raising=False)


@pytest.fixture
def lake(request, tmp_path) -> tuple[str, str]:
    """(--db, --data-path) of a new lake whose catalog is of the kind the test names (`on(...)`)."""
    data = str(tmp_path / "lake-data")
    if request.param == "sqlite":
        return f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}", data
    if request.param == "duckdb":
        return f"ducklake:{tmp_path / 'catalog.ducklake'}", data
    return f"ducklake:postgres:{request.getfixturevalue('postgres')()}", data


def run(*args: str, code: int | None = 0) -> str:
    """The command's output, its exit code checked (unless `code` is None)."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if code is not None:
        assert result.exit_code == code, result.output
    return result.output


def stored(db: str) -> tuple[dict, list[tuple]]:
    """Stats and every (record sha256, raw bytes, source, locator) of an archive."""
    with Archive.open(db, read_only=True) as archive:
        records = archive.con.execute(
            f"SELECT sha256, raw, source_path, locator FROM {WHOLE_RECORDS} AS r ORDER BY source_path, seq"
        ).fetchall()
        return archive.stats(), records


def start_writer(db: str, data: str, paths: list[Path]) -> subprocess.Popen:
    """`archiver ingest --json --wait-for-writers` of `paths` in a process of its own."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "archiver",
            "ingest",
            *map(str, paths),
            "--db",
            db,
            "--data-path",
            data,
            "--json",
            "--wait",
            "60",
            "--wait-for-writers",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=os.environ.copy(),
    )


def one_file(tmp_path: Path, name: str = "one.jsonl", task: str = "t-lease") -> tuple[Path, str]:
    """A transcript of one task, and its SHA-256."""
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(jsonrpc_result({"task": v1_task(task, v1_cited_parts())})) + "\n")
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def catalog_leases(db: str):
    """The lake's leases read without opening the lake (whose SQLite catalog a reader would hold locked)."""
    from archiver.store.leases import leases_for

    return leases_for(locate(db))
