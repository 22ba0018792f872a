"""A progress line on standard error, only when it is a terminal."""

from __future__ import annotations

import sys
from typing import Self


class Progress:
    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.files = self.records = 0

    def update(self, outcome) -> None:
        self.files += 1
        self.records += max(outcome.records, 0)
        if self.enabled:
            sys.stderr.write(f"\r\x1b[Kingesting: {self.files} files, {self.records:,} records  {outcome.path[-50:]}")
            sys.stderr.flush()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled and self.files:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
