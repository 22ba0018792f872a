"""Processes on this host, told apart by pid and start time; a process that goes without pandas.

A pid alone names a process only while it lives: the kernel hands it out again, so whoever remembers a
pid (a lake lease, a spool file of a live ingest) also remembers when that process started, and takes a
live process with another start time for what it is: someone else.
"""

from __future__ import annotations

import os
import sys
from functools import cache


@cache
def _boot_id() -> str:
    """This boot of the kernel: start times count from boot, so the same count after a reboot is another process."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def start_time(pid: int) -> str | None:
    """When `pid` started, as `<boot id>:<clock ticks since boot>` (field 22 of /proc/<pid>/stat); None when
    the process is gone (a zombie included) or this system has no /proc."""
    fields = _stat(pid)
    if fields is None or fields[0] in (b"Z", b"X"):
        return None
    return f"{_boot_id()}:{int(fields[19])}"


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()


def alive(pid: int, started: str | None) -> bool:
    """Whether the process that was `pid`, started at `started` (None: unknown), still runs."""
    if os.path.isdir("/proc"):
        now = start_time(pid)
        return now is not None and (started is None or now == started)
    try:  # no /proc: the pid is all there is to go by
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _WithoutPandas:
    """A module finder that answers an import of one of `packages` as the package not being installed."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = packages

    def find_spec(self, name: str, path=None, target=None) -> None:
        if name.partition(".")[0] in self.packages:
            raise ModuleNotFoundError(f"No module named {name!r} (this archiver process goes without it)", name=name)


_GONE_WITHOUT = ("pandas", "numpy")


def without_pandas() -> None:
    """This process goes without pandas and numpy, installed or not: as if they were not installed.

    DuckDB imports pandas, where it is installed, on the first statement with bound parameters, and
    pyarrow on the first array it builds, each to check whether a value is one of its types: 0.2 to
    0.3 s and 40 MB per process before any work. DuckDB and pyarrow import numpy, where it is installed, as
    they are imported: 0.03-0.07 s of every command that reads rows. The command and its workers never hand
    any of them a pandas or numpy object (an extractor that `verify` runs is a process of its own, which may
    use both). (A `None` in `sys.modules` would not do: pyarrow then fails instead of doing without.)"""
    gone = tuple(name for name in _GONE_WITHOUT if name not in sys.modules)  # one imported already stays
    if gone and not any(isinstance(f, _WithoutPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _WithoutPandas(gone))
