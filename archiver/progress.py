"""An ingest's progress on standard error: bytes and records read of the total, files, speed and ETA,
redrawn at least once a second. By default only when standard error is a terminal; forced, it writes a
line a second to whatever standard error is."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Self

from .render.terminal import printable

TICK_SECONDS = 0.5


class Progress:
    """Told by the ingest what it plans to read (`planned`), each file read (`read`) and each file done
    (`update`, the `on_file` callback); a thread redraws the line while the run lasts."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.terminal = sys.stderr.isatty()
        self.enabled = self.terminal if enabled is None else enabled
        self.files = self.records = 0
        self.files_total = self.bytes_total = self.bytes_read = self.files_read = 0
        self.started = time.monotonic()
        self.last = ""
        self.reading: Callable[[], tuple[int, int]] = lambda: (0, 0)
        self.shown = self.shown_records = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def planned(self, files: int, size: int, reading: Callable[[], tuple[int, int]] = lambda: (0, 0)) -> None:
        with self._lock:
            self.files_total += files
            self.bytes_total += size
            self.reading = reading

    def read(self, path: str, size: int, records: int) -> None:
        with self._lock:
            self.files_read += 1
            self.bytes_read += size
            self.records += max(records, 0)
            self.last = path

    def update(self, outcome) -> None:
        with self._lock:
            self.files += 1

    def parts(self) -> list[str]:
        """What the progress line says now, most important first."""
        with self._lock:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            size, records = self.reading()
            self.shown = done = max(self.shown, self.bytes_read + size)
            self.shown_records = max(self.shown_records, self.records + records)
            total = max(self.bytes_total, done)
            share = f" ({done / total:.0%})" if total else ""
            rate, left = done / elapsed, total - done
            eta = _clock(math.ceil(left / rate)) if rate and left else "?" if left else _clock(0)
            if self.files_total and self.files_read >= self.files_total:  # all read: the writer finishes
                files = f"{self.files} of {self.files_total} files stored"
            else:
                files = f"{self.files_read} of {self.files_total} files read"
            return [
                f"ingesting: {_size(done)} of {_size(total)}{share}",
                files,
                f"{self.shown_records:,} records",
                f"ETA {eta}",
                f"{_size(rate)}/s",
                f"{_clock(elapsed)} elapsed",
                printable(self.last[-40:]),
            ]

    def line(self, width: int | None = None) -> str:
        """The progress line: as many of its parts as fit in `width` characters (all, without one)."""
        parts = self.parts()
        if width is None:
            return "  ".join(parts)
        shown = parts[0][:width]
        for part in parts[1:]:
            if len(shown) + 2 + len(part) > width:
                break
            shown += "  " + part
        return shown

    def done(self) -> str:
        """The line left on a terminal once the run ends (the summary after it counts files and records)."""
        self.parts()  # brings what is shown up to what was read
        with self._lock:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            return f"ingested: {_size(self.shown)} in {_clock(elapsed)} ({_size(self.shown / elapsed)}/s)"

    def draw(self) -> None:
        if self.terminal:
            sys.stderr.write("\r\x1b[K" + self.line(_width() - 1))
        else:
            sys.stderr.write(self.line() + "\n")
        sys.stderr.flush()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS if self.terminal else 1.0):
            self.draw()

    def __enter__(self) -> Self:
        if self.enabled:
            if self.terminal:
                self.draw()  # at once: a run shorter than a tick shows it too
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._ticker is None:
            return
        self._stop.set()
        self._ticker.join()
        if self.terminal:
            sys.stderr.write("\r\x1b[K" + self.done()[: _width() - 1] + "\n")
            sys.stderr.flush()
        else:
            self.draw()


def _width() -> int:
    """The terminal's width now (it may have been resized), from standard error."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80
    except (OSError, ValueError):
        return 80


def _size(count: float) -> str:
    if count < 1000:
        return f"{count:.0f} B"
    for unit in ("kB", "MB", "GB"):
        count /= 1000
        if count < 1000 or unit == "GB":
            break
    return f"{count:.1f} {unit}"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
