"""An ingest's progress on standard error: bytes read of the total, files stored, records, speed and a
time left, redrawn at least once a second; while a commit runs, what it commits and the step it is at;
after the last, what the run finishes with. By default only when standard error is a terminal; forced,
it writes a line a second to whatever standard error is.

The time left is shown only once it can be known: each byte is read, then written by a commit (one at
a time, in the writer), so it is the longer of the reading left at the speed of reading and the writing
left at the speed the commits so far wrote; before the first commit ends, and while the run finishes,
there is none."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Self

from .render.terminal import printable

TICK_SECONDS = 0.5


class Progress:
    """Told by the ingest what it plans to store (`planned`), each file read (`read`), each commit
    (`committing`, `writing`, `committed`) and what it finishes with (`finishing`): the `Watcher` of
    `ingest.run`; a thread redraws the line while the run lasts."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.terminal = sys.stderr.isatty()
        self.enabled = self.terminal if enabled is None else enabled
        self.records = self.files_total = self.bytes_total = self.bytes_read = 0
        self.files_read = self.stored_files = self.stored_bytes = 0
        self.started = time.monotonic()
        self.last = ""
        self.reading: Callable[[], tuple[int, int]] = lambda: (0, 0)
        self.shown = self.shown_records = 0
        self.commit: tuple[int, int, float] | None = None
        """The commit under way: its files, bytes, and when it began."""
        self.step = ""
        self.commit_seconds = 0.0
        """How long the commits that ended took."""
        self.finish = ""
        self.listed = False
        """Whether the ingest has said what it will store (before, it opens the archive and lists the files)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def planned(self, files: int, size: int, reading: Callable[[], tuple[int, int]] = lambda: (0, 0)) -> None:
        with self._lock:
            self.listed = True
            self.files_total += files
            self.bytes_total += size
            self.reading = reading

    def read(self, path: str, size: int, records: int) -> None:
        with self._lock:
            self.files_read += 1
            self.bytes_read += size
            self.records += max(records, 0)
            self.last = path

    def committing(self, files: int, size: int) -> None:
        with self._lock:
            self.commit, self.step = (files, size, time.monotonic()), "beginning"

    def writing(self, step: str) -> None:
        with self._lock:
            self.step = step

    def committed(self, files: int, size: int) -> None:
        with self._lock:
            if self.commit is not None:
                self.commit_seconds += time.monotonic() - self.commit[2]
            self.commit = None
            self.stored_files += files
            self.stored_bytes += size

    def finishing(self, what: str) -> None:
        with self._lock:
            self.finish = what

    def parts(self) -> list[str]:
        """What the progress line says now, most important first."""
        with self._lock:
            now = time.monotonic()
            elapsed = max(now - self.started, 1e-9)
            size, records = self.reading()
            self.shown = done = max(self.shown, self.bytes_read + size)
            self.shown_records = max(self.shown_records, self.records + records)
            total = max(self.bytes_total, done)
            if not self.listed:
                return ["ingesting: opening the archive, listing the files", f"{_clock(elapsed)} elapsed"]
            left = self._left(done, total, elapsed, now)
            return [
                self._doing(done, total),
                f"{self.stored_files} of {self.files_total} files stored",
                f"{self.shown_records:,} records read",
                *([f"{_clock(left)} left"] if left is not None else []),
                *([f"{_size(done / elapsed)}/s"] if done < total else []),
                f"{_clock(elapsed)} elapsed",
                printable(self.last[-40:]),
            ]

    def _doing(self, done: int, total: int) -> str:
        if self.finish:
            return f"finishing: {self.finish}"
        if self.commit is not None:
            files, size, _ = self.commit
            return f"committing {files} file{'s' * (files != 1)} ({_size(size)}): {self.step}"
        share = f" ({done / total:.0%})" if total else ""
        building = self.files_total - self.files_read
        if share == " (100%)" and building > 0:  # every byte read as far as is shown; the core builds the rows
            return f"ingesting: {_size(total)} read, building the rows of {building} file{'s' * (building != 1)}"
        return f"ingesting: {_size(done)} of {_size(total)} read{share}"

    def _left(self, done: int, total: int, elapsed: float, now: float) -> float | None:
        """The time left, None until a commit has ended (the writing's speed is unknown), once the estimate
        has run out, and while the run finishes (counting the index and closing the archive take what they
        take)."""
        if self.finish or not self.stored_bytes or self.commit_seconds <= 0:
            return None
        under_way = now - self.commit[2] if self.commit is not None else 0.0
        writing = (self.bytes_total - self.stored_bytes) * self.commit_seconds / self.stored_bytes - under_way
        reading = (total - done) * elapsed / done if done else 0.0
        left = max(writing, reading)
        return left if left >= 1 else None  # past the estimate: unknown, not "0:00:00"

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
        """The line left on a terminal once the run ends: what it stored (the summary after it counts files
        and records)."""
        with self._lock:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            stored = self.stored_bytes
            return f"ingested: {_size(stored)} in {_clock(elapsed)} ({_size(stored / elapsed)}/s)"

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

    def __exit__(self, failed: type[BaseException] | None, *exc) -> None:
        """The line replaced by what was stored; after an error or an interrupt taken away, leaving the one
        statement of what was committed to the message that follows."""
        if self._ticker is None:
            return
        self._stop.set()
        self._ticker.join()
        if self.terminal:
            sys.stderr.write("\r\x1b[K" + ("" if failed else self.done()[: _width() - 1] + "\n"))
            sys.stderr.flush()
        elif not failed:
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
