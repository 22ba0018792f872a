"""Source paths as people and code hosts are shown them: relative to the working directory (where an
ingest was run from, as a rule) when they lie beneath it. Every output for people (the terminal's tables,
Markdown, audit's text and SARIF, `show`, the web view's cells) shows a path by `display_path`; the machine
formats (JSON, JSON Lines, CSV, TSV) keep the stored, absolute path."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

PATH_FIELDS = frozenset({"source_path", "path", "first_path", "alias_of"})
"""The fields of a listing's rows that hold a source file's path (the archive's columns of that name)."""


def display_path(path: str) -> str:
    """A stored (absolute) source path, relative to the working directory when it lies beneath it."""
    return _relative(path, os.getcwd())


@lru_cache(maxsize=4096)
def _relative(path: str, cwd: str) -> str:
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def display_text(text: str) -> str:
    """A sentence with the stored paths beneath the working directory in it shown relative to it."""
    return text.replace(os.path.join(os.getcwd(), ""), "")


def holds_path(row: dict, name: str) -> bool:
    """Whether the field `name` of `row` is a source file's path: a path field, or the `id` of a
    `source_file` row of `query impact`."""
    return name in PATH_FIELDS or (name == "id" and row.get("kind") == "source_file")


def shown_field(row: dict, name: str) -> Any:
    """The value of `name` in `row` as people read it: a path shown by `display_path`, the rest as stored."""
    value = row.get(name)
    return display_path(value) if isinstance(value, str) and value and holds_path(row, name) else value
