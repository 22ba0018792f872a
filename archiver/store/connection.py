"""One short-lived DuckDB connection per command, waiting politely for other processes."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import duckdb

DEFAULT_DB = "archive.duckdb"
DEFAULT_WAIT_SECONDS = 5.0
_LOCK = re.compile(r"Could not set lock on file|Conflicting lock")
_PID = re.compile(r"\(PID (\d+)\)")


class ArchiveBusy(RuntimeError):
    """Another process holds the archive for longer than we were allowed to wait."""


def archive_path(db: str | None) -> str:
    return db or os.environ.get("ARCHIVER_DB") or DEFAULT_DB


def connect(path: str, read_only: bool = False, wait: float = DEFAULT_WAIT_SECONDS) -> duckdb.DuckDBPyConnection:
    """Open the archive, retrying while another process holds its lock, then say who holds it."""
    deadline = time.monotonic() + max(wait, 0.0)
    delay = 0.05
    if read_only and not Path(path).exists():
        raise FileNotFoundError(f"{path}: no archive here (ingest something first, or pass --db)")
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.IOException as exc:
            if not _LOCK.search(str(exc)):
                raise
            if time.monotonic() >= deadline:
                pid = _PID.search(str(exc))
                holder = f"process {pid.group(1)}" if pid else "another process"
                raise ArchiveBusy(
                    f"{path}: the archive is busy: {holder} holds it; waited {wait:g}s (use --wait to wait longer)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
