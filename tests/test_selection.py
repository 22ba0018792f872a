"""`--source` has one meaning in every command: a path (relative or absolute; a directory means every file
under it) or a glob, and it follows path aliases. Query, export, audit and verify select the same files."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.query.selection import Selection
from tests.transcripts import SAMPLES

FOLDER = "versant-insights"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The samples copied under a working directory, ingested, plus an alias: the same folder copied
    under another name and ingested too (its files are recorded as aliases of the first)."""
    root = tmp_path_factory.mktemp("selection")
    shutil.copytree(SAMPLES, root / "samples")
    shutil.copytree(SAMPLES / FOLDER, root / "moved")
    db = str(root / "archive.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(root / "samples"), str(root / "moved")], workers=1)
    return root, db


def cli(root, *args: str) -> str:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(cwd)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def stored_under(db: str, folder: str) -> set[str]:
    with Archive.open(db, read_only=True) as archive:
        rows = archive.con.execute(
            "SELECT DISTINCT path FROM sources WHERE alias_of IS NULL AND starts_with(path, ?)", [folder + "/"]
        ).fetchall()
    return {path for (path,) in rows}


@pytest.mark.slow
@pytest.mark.parametrize(
    "given",
    [f"samples/{FOLDER}/", f"samples/{FOLDER}", f"*/{FOLDER}/*", "moved"],
    ids=["relative-dir-slash", "relative-dir", "glob", "alias"],
)
def test_every_command_selects_the_same_files(corpus, given):
    root, db = corpus
    files = stored_under(db, str(root / "samples" / FOLDER))
    assert files
    exported = {
        json.loads(line)["source_path"]
        for line in cli(root, "export", "--raw", "--source", given, "--db", db).splitlines()
    }
    assert exported == files
    # The claims and findings of the selected files are exactly those of the whole archive stored there.
    claims = cli(root, "query", "claims", "--source", given, "--format", "jsonl", "--db", db).splitlines()
    every_claim = cli(root, "query", "claims", "--format", "jsonl", "--db", db).splitlines()
    assert claims
    assert claims == [line for line in every_claim if json.loads(line)["source_path"] in files]
    audit = json.loads(cli(root, "audit", "--source", given, "--format", "json", "--fail-on", "never", "--db", db))
    every_finding = json.loads(cli(root, "audit", "--format", "json", "--fail-on", "never", "--db", db))
    assert audit["findings"]
    assert audit["findings"] == [f for f in every_finding["findings"] if f["source_path"] in files]


@pytest.mark.slow
def test_an_absolute_path_and_a_file(corpus):
    root, db = corpus
    one = sorted(stored_under(db, str(root / "samples" / FOLDER)))[0]
    exported = {
        json.loads(line)["source_path"]
        for line in cli(root, "export", "--raw", "--source", one, "--db", db).splitlines()
    }
    assert exported == {one}


def test_selection_is_one_value_for_the_api():
    chosen = Selection.of(source=("a/",), study="S*", agent=None)
    assert chosen.source == ("a/",)
    assert chosen.chooses_copies()
    assert chosen.chooses_citations()
    assert not Selection.of(source=()).chooses_copies()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["run[1].jsonl", "run*.jsonl", "run?.jsonl"])
def test_a_source_named_with_glob_characters_is_found_by_its_name(tmp_path, name):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(SAMPLES / FOLDER / "rpc-v1.jsonl", folder / name)
    shutil.copy(SAMPLES / FOLDER / "compat-v03-rpc.jsonl", folder / "run1.jsonl")
    db = str(tmp_path / "a.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(folder)], workers=1)
    exported = cli(tmp_path, "export", "--raw", "--source", f"logs/{name}", "--db", db)
    assert {json.loads(line)["source_path"] for line in exported.splitlines()} >= {str(folder / name)}
    assert exported.count(str(folder / name)) == len((SAMPLES / FOLDER / "rpc-v1.jsonl").read_text().splitlines())
