"""Which files an ingest reads: paths, folders walked in name order, globs, standard input and live task
stores, as `SourceFile`s; what a walk passes over (hidden files, `.archiverignore`, open spool segments)."""

from __future__ import annotations

import fnmatch
import glob
import os
import sys
from collections.abc import Iterable, Iterator, Sequence

from ..errors import InputError
from ..read import stores
from ..read.containers import SourceFile, shown
from ..read.segments import is_open

STDIN = "<stdin>"

IGNORE_FILE = ".archiverignore"


def expand(
    paths: Iterable[str], tables: Sequence[str] = (), unreadable: list[str] | None = None
) -> Iterator[SourceFile]:
    """Files, directories (recursively, in name order), globs, "-" for standard input, and live task
    stores (`postgresql://...`, `mysql://...`: a source for each of `tables`, else for each task table).

    In a directory walk, hidden files are passed over, and so is whatever a `.archiverignore` file (one
    glob per line, `dir/` for a folder) names beside or above it in the walk. A file named explicitly is
    always read, except a spool segment still being written (`*.open`): no ingest reads one. A folder
    the walk cannot list is added to `unreadable`; one named explicitly that cannot be listed is an
    `InputError` (a file that cannot be read is quarantined, named or not).
    """
    for given in paths:
        if given == "-":
            yield SourceFile(STDIN, sys.stdin.buffer.read())
            continue
        if stores.is_store_url(given):
            yield from stores.snapshot(given, tables)
            continue
        matches = sorted(glob.glob(given, recursive=True)) if glob.has_magic(given) else [given]
        if not matches:
            raise InputError(f"{shown(given)}: no such file or directory")
        for match in matches:
            if os.path.isdir(match):
                yield from walk(match, unreadable, named=match == given)
            elif is_open(match):  # a spool segment still being written: never read
                continue
            elif os.path.lexists(match):  # a dangling symlink too: quarantined as unreadable, as in a walk
                yield SourceFile.on_disk(match)
            else:
                raise InputError(f"{shown(match)}: {_missing(match)}")


def _missing(path: str) -> str:
    """Why `path` cannot be seen: a folder on its way that may not be searched, or nothing there."""
    try:
        os.lstat(path)
    except PermissionError:
        return "permission denied: a folder on its path cannot be searched"
    except OSError:
        pass
    return "no such file or directory"


def walk(top: str, unreadable: list[str] | None = None, named: bool = False) -> Iterator[SourceFile]:
    """The files under `top`, each folder's `.archiverignore` rules applying beneath it; the folders it cannot
    list are added to `unreadable` (`top` itself, when `named` on the command line, is an `InputError`). A
    folder's rules are its parent's and its own (looking through every folder seen so far made the walk
    quadratic: 11% of ingesting 11,100 small files in 300 folders)."""
    unreadable = [] if unreadable is None else unreadable

    def unlisted(exc: OSError) -> None:
        if named and exc.filename == top:
            raise InputError(f"{shown(top)}: {(exc.strerror or str(exc)).lower()}: cannot list the folder") from None
        unreadable.append(f"{shown(os.path.abspath(exc.filename))}: {(exc.strerror or str(exc)).lower()}")

    rules: dict[str, list[tuple[str, str]]] = {}
    for root, dirs, files in os.walk(top, onerror=unlisted, followlinks=False):
        inherited = rules.get(os.path.dirname(root), [])  # os.walk names a child folder os.path.join(root, name)
        own = [(root, pattern) for pattern in _ignore_rules(root)]
        inherited = rules[root.rstrip(os.sep) or root] = inherited + own if own else inherited
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not _ignored(os.path.join(root, d), inherited, folder=True)
        )
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.startswith(".") and not is_open(name) and not _ignored(path, inherited, folder=False):
                yield SourceFile.on_disk(path)


def _ignore_rules(folder: str) -> list[str]:
    try:
        with open(os.path.join(folder, IGNORE_FILE), encoding="utf-8") as handle:
            return [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    except OSError:
        return []


def _ignored(path: str, rules: list[tuple[str, str]], folder: bool) -> bool:
    for base, pattern in rules:
        relative = os.path.relpath(path, base)
        if pattern.endswith("/"):
            if folder and fnmatch.fnmatch(relative, pattern.rstrip("/")):
                return True
        elif fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            return True
    return False
