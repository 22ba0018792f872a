"""Where an export goes: a path or a binary file object for JSON Lines, a directory for files and Parquet."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from ..errors import QueryError


class ExportTargetError(QueryError):
    """An export's target that cannot take what it is given: not a path, a folder or a writable file."""


def is_path(target: Any) -> bool:
    return isinstance(target, (str, os.PathLike))


@contextmanager
def binary_out(target: Any, fmt: str) -> Iterator[BinaryIO]:
    """`target` to write bytes to: a path (the file made or replaced, closed after), or a file object open
    for writing (a text one's binary buffer), left open."""
    if is_path(target):
        try:
            out = open(target, "wb")  # noqa: SIM115 (closed below, after the export)
        except OSError as exc:
            raise ExportTargetError(f"cannot write the {fmt} export to {os.fsdecode(target)}: {exc.strerror}") from None
        with out:
            yield out
        return
    out = getattr(target, "buffer", None) if isinstance(target, io.TextIOBase) else target
    if not callable(getattr(out, "write", None)):
        raise ExportTargetError(f"a {fmt} export goes to a path or a binary file object, not {_kind(target)}")
    yield out


def directory(target: Any, fmt: str) -> str:
    """`target` as the path of a directory (made if need be) for an export of many files."""
    if not is_path(target):
        raise ExportTargetError(f"a {fmt} export goes to a directory path (str or os.PathLike), not {_kind(target)}")
    path = os.fsdecode(target)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ExportTargetError(f"cannot export {fmt} to the directory {path}: {exc.strerror}") from None
    return path


def _kind(target: Any) -> str:
    return "a text stream without a binary buffer" if isinstance(target, io.TextIOBase) else type(target).__name__
