"""Filters shared by the lineage queries, turned into SQL with bound parameters only.

A value matches exactly, unless it holds a `*`: then `*` matches any run of
characters (`\\*` a literal star) and nothing else in it is special.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta

Strings = str | Iterable[str] | None


@dataclass
class Filters:
    """What a lineage question is about. Several values of one filter mean any of them."""

    study: Strings = None
    period: Strings = None
    column: Strings = None
    table: Strings = None
    function: Strings = None
    weight: Strings = None
    agent: Strings = None
    task: Strings = None
    since: str | datetime | date | None = None
    until: str | datetime | date | None = None
    has_warnings: bool | None = None
    min_n: float | None = None
    max_n: float | None = None
    valid: bool | None = None
    inferred: bool | None = None

    @classmethod
    def of(cls, **given) -> Filters:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise TypeError(f"unknown filter {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        return cls(**given)

    def where(self, prefix: str = "", scope: str = "all") -> tuple[str, list]:
        """A WHERE condition over a relation with the `claim_citations` / `citation_uses` columns.

        `scope` "citation" keeps the conditions on the citation's own fields, "copy" those on the
        stored copy (agent, task, task time), "all" both.
        """
        conditions: list[str] = []
        params: list = []
        for name, column in _TEXT_COLUMNS.items():
            if scope == "all" or (scope == "copy") == (name in _COPY_FILTERS):
                _text_condition(prefix + column, getattr(self, name), conditions, params)
        if scope != "citation":
            self._time(prefix, conditions, params)
        if scope != "copy":
            self._citation(prefix, conditions, params)
        return " AND ".join(conditions) or "TRUE", params

    def _time(self, prefix: str, conditions: list[str], params: list) -> None:
        if self.since is not None:
            conditions.append(f"{prefix}timestamp >= ?")
            params.append(moment(self.since, end=False))
        if self.until is not None:
            whole_day = is_date(self.until)
            conditions.append(f"{prefix}timestamp {'<' if whole_day else '<='} ?")
            params.append(moment(self.until, end=True))

    def _citation(self, prefix: str, conditions: list[str], params: list) -> None:
        if self.has_warnings is not None:
            conditions.append(f"len({prefix}warnings) {'>' if self.has_warnings else '='} 0")
        if self.min_n is not None:
            conditions.append(f"{prefix}base_n >= ?")
            params.append(float(self.min_n))
        if self.max_n is not None:
            conditions.append(f"{prefix}base_n <= ?")
            params.append(float(self.max_n))
        for name in ("valid", "inferred"):
            wanted = getattr(self, name)
            if wanted is not None:
                conditions.append(f"{prefix}{name} = ?")
                params.append(bool(wanted))


_COPY_FILTERS = frozenset({"agent", "task"})


_TEXT_COLUMNS = {
    "study": "study",
    "period": "period",
    "column": "source_column",
    "table": "source_table",
    "function": "source_function",
    "weight": "weight",
    "agent": "agent",
    "task": "task_id",
}


def _text_condition(column: str, value: Strings, conditions: list[str], params: list) -> None:
    if value is None:
        return
    values = [value] if isinstance(value, str) else list(value)
    if not values:
        return
    alternatives = []
    for item in values:
        if is_glob(item):
            alternatives.append(f"{column} LIKE ? ESCAPE '\\'")
            params.append(like_pattern(item))
        else:
            alternatives.append(f"{column} = ?")
            params.append(item.replace("\\*", "*"))
    conditions.append("(" + " OR ".join(alternatives) + ")")


def is_glob(value: str) -> bool:
    return "*" in value.replace("\\*", "")


def like_pattern(glob: str) -> str:
    """A LIKE pattern (escape character `\\`) matching what the glob matches."""
    out, index = [], 0
    while index < len(glob):
        char = glob[index]
        if char == "\\" and glob[index + 1 : index + 2] == "*":
            out.append("*")
            index += 2
            continue
        out.append("%" if char == "*" else "\\" + char if char in "%_\\" else char)
        index += 1
    return "".join(out)


def is_date(value: str | datetime | date) -> bool:
    if isinstance(value, str):
        return len(value.strip()) == 10
    return not isinstance(value, datetime)


def moment(value: str | datetime | date, end: bool) -> datetime:
    """A point in time; a bare date means its start (for --since) or the start of the next day (--until)."""
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO-8601 date or time") from None
    if not isinstance(value, datetime):
        value = datetime.combine(value + timedelta(days=1) if end else value, time())
    return value if value.tzinfo else value.replace(tzinfo=UTC)
