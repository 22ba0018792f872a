"""Citations v1 as the archive names it: a citation's fields (the `citations` table's columns) and the spec's
names. Recognising a citation Part and judging it by the spec's rules happens in the core
(`archiver/core/src/cite/`), which writes those columns."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date


@dataclass
class Citation:
    inferred: bool
    study: str | None = None
    period: str | None = None
    fielded: str | None = None
    fielded_start: date | None = None
    fielded_end: date | None = None
    base_name: str | None = None
    base_n: float | None = None
    weight: str | None = None
    source_table: str | None = None
    source_column: str | None = None
    source_function: str | None = None
    warnings: list[str] = field(default_factory=list)
    extra: str | None = None
    problems: list[str] = field(default_factory=list)
    citation_hash: str = ""

    @property
    def valid(self) -> bool:
        return not self.problems


_NAMES = [f.name for f in fields(Citation)]
CONTENT_FIELDS = tuple(_NAMES[_NAMES.index("study") : _NAMES.index("extra") + 1])
"""What a citation says, as stored in the `citations` table's columns of the same names (study through extra)."""
