"""The core's stage contracts are `cargo test` golden files (`archiver/core/tests/stages.rs`, files in
`archiver/core/tests/golden/`): this runs them with the suite, and holds the schemas they index with to
the ones the migrated archive declares."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from archiver.load.schemas import arrow_schemas
from archiver.store import migrations

CORE = Path(__file__).resolve().parent.parent / "archiver" / "core"
TYPE_NAMES = {
    "string": "text",
    "binary": "bytes",
    "bool": "bool",
    "date32[day]": "date",
    "double": "f64",
    "extension<arrow.json>": "json",
    "int32": "i32",
    "int64": "i64",
    "list<l: string>": "list",
    "timestamp[us, tz=Etc/UTC]": "moment",
}
"""Arrow's names of the archive's column types, and the golden schemas' (`stages.rs`'s `field`)."""


def cargo() -> str | None:
    home = Path.home() / ".cargo" / "bin" / "cargo"
    return shutil.which("cargo") or (str(home) if home.is_file() else None)


def test_golden_schemas_are_the_migrated_archives():
    con = duckdb.connect()
    migrations.upgrade(con)
    declared = [
        " ".join([table, *(f"{field.name}:{TYPE_NAMES[str(field.type)]}" for field in schema)])
        for table, schema in arrow_schemas(con).items()
    ]
    assert (CORE / "tests" / "golden" / "schemas.txt").read_text().splitlines() == declared


@pytest.mark.slow
def test_cargo_test_holds_the_stage_contracts_and_unit_tests():
    found = cargo()
    if found is None:
        pytest.skip("cargo is missing: the core's own tests need Rust (docs/contributing.md, The compiled core)")
    environment = {key: value for key, value in os.environ.items() if key != "UPDATE_GOLDEN"}
    run = subprocess.run(
        [found, "test", "--release", "--quiet"], cwd=CORE, env=environment, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
