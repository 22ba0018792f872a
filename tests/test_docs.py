"""The docs run as written: every shell and Python block of README.md and docs/ runs against the samples
(unless a `<!-- not run: reason -->` line stands right above it), every relative link and anchor
resolves, and docs/reference.md is the CLI's `--help` as it is now.

After a deliberate change to the CLI, rewrite the reference and review its diff:

    ARCHIVER_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_docs.py -k reference
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from archiver.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REFERENCE = ROOT / "docs" / "reference.md"
UPDATE = os.environ.get("ARCHIVER_UPDATE_SNAPSHOTS") == "1"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
NOT_RUN = re.compile(r"<!-- not run: [^>]+ -->\s*$")
SHELL = {"sh", "bash", "shell", "console"}


def blocks() -> list[tuple[str, int, str, str]]:
    """(page, line, language, code) of every shell or Python block not marked as not run."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            language, code = match.group(1), match.group(2)
            if language not in SHELL | {"python"}:
                continue
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if NOT_RUN.search(before):
                continue
            found.append((str(page.relative_to(ROOT)), text.count("\n", 0, match.start()) + 1, language, code))
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder laid out as the repository is for a newcomer after the README's first command: the
    samples, `.venv` (this interpreter's environment) and `./archive.duckdb` holding the samples."""
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "sample_transcripts", root / "sample_transcripts")
    (root / ".venv").symlink_to(sys.prefix)
    archiver = Path(sys.prefix) / "bin" / "archiver"
    subprocess.run([str(archiver), "ingest", "sample_transcripts/"], cwd=root, check=True, capture_output=True)
    return root


@pytest.mark.slow
@pytest.mark.parametrize(("page", "line", "language", "code"), blocks(), ids=lambda v: str(v)[:40])
def test_block_runs_as_written(workdir, page, line, language, code):
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    env.pop("ARCHIVER_DB", None)
    if language == "python":
        command = [sys.executable, "-c", code]
    elif language == "console":  # a transcript: the commands are the lines after "$ "
        commands = [line[2:] for line in code.splitlines() if line.startswith("$ ")]
        command = ["bash", "-e", "-o", "pipefail", "-c", "\n".join(commands)]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", code]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{page}:{line} exited {done.returncode}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, f"{page}:{line}\n{done.stderr[-2000:]}"


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_resolve(page):
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL: not fetched (nothing reaches the network)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        missing_anchor = resolved.exists() and anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)
        if not resolved.exists() or missing_anchor:
            broken.append(target)
    assert broken == []


def reference() -> str:
    """Every command's --help, in the order the CLI lists them, at a fixed width."""
    out = [
        "# Command reference",
        "",
        "Generated from each command's `--help` by `tests/test_docs.py` (see its docstring to regenerate).",
        "",
    ]

    def visit(command: click.Command, path: list[str], parent: click.Context | None) -> None:
        ctx = click.Context(  # as the CLI makes them (-h too: click keeps a command's help option once made)
            command,
            info_name=path[-1],
            parent=parent,
            terminal_width=100,
            max_content_width=100,
            help_option_names=["-h", "--help"],
        )
        out.extend(
            [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", "", "```text", command.get_help(ctx), "```", ""]
        )
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    visit(sub, [*path, name], ctx)

    visit(main, ["archiver"], None)
    return "\n".join(out)


def test_reference_is_the_help_of_every_command():
    written = reference()
    if UPDATE:
        REFERENCE.write_text(written, encoding="utf-8")
    assert REFERENCE.read_text(encoding="utf-8") == written, "docs/reference.md is stale: see this module's docstring"


def documented() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 170


def test_every_environment_variable_and_ignore_file_is_documented():
    code = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "archiver").rglob("*.py"))
    names = set(re.findall(r"ARCHIVER_[A-Z_]+", code)) | {".archiverignore"}
    assert {name for name in names if name not in documented()} == set()


def test_every_rule_has_its_section_and_no_count_of_rules_can_drift():
    from archiver.audit import RULES

    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("### `")]
    assert {rule.id for rule in RULES} == {name for line in headings for name in re.findall(r"`([a-z-]+)`", line)}
    assert not re.search(r"\b(seven|eight|nine|ten|eleven|twelve) rules\b", documented())


def test_every_view_is_in_the_documented_table_once():
    from archiver.store.views import VIEWS

    text = (ROOT / "docs" / "query.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", text, re.M)
    assert sorted(rows) == sorted(VIEWS)


def test_installs_name_the_free_distribution():
    """`archiver` on PyPI is another project ("Manage files based on their SHA1 hashes"): every install
    the docs show, and the project's own metadata, name `a2a-archiver`; the command stays `archiver`."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "a2a-archiver"
    assert project["scripts"] == {"archiver": "archiver.cli:run"}
    code = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "archiver").rglob("*.py"))
    installs = [line.split("#")[0] for line in re.findall(r"pip install[^\n`]*", documented() + code)]
    assert installs
    assert [line for line in installs if re.search(r"[\s'\"]archiver(\[|\s|'|\"|$)", line)] == []


def test_the_readme_says_how_values_match_as_the_tool_does():
    """The README said matching is exact, the tool that `*` is a glob (issue 41)."""
    from archiver.cli import MATCHING

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"--study 'versant*'        # nothing: {MATCHING}" in readme
    assert "matching is exact" not in readme
