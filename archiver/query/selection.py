"""What a command is about: one `Selection`, read by query, export, audit and verify alike, turned into SQL
with bound parameters only.

A text value matches exactly, unless it holds a `*`: then `*` matches any run of characters (`\\*` a
literal star) and nothing else in it is special. A source is a path, absolute or relative to the working
directory, that matches that file or anything under that directory, or a glob (`*`, `?`, `[`) over paths
(the path as written matches too, so a name holding `[` is found); it also matches what was stored from
the same bytes under another path (an alias: a copied, moved or symlinked dump selects the files it
holds).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime, time, timedelta

from ..errors import UsageError
from ..read.containers import shown
from ..read.stores import is_store_url
from ..read.stores import shown as store_source

Strings = str | Iterable[str] | None


@dataclass
class Selection:
    """What a question is about. Several values of one filter mean any of them; none, everything."""

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
    source: Strings = None

    def __post_init__(self) -> None:
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None:
                moment(value, end=name == "until")  # a value that is no time is refused here, by its option
        for name in ("min_n", "max_n"):
            value = getattr(self, name)
            if value is not None and not _finite(value):
                raise UsageError(f"{value!r} is not a finite number", "--" + name.replace("_", "-"))

    @classmethod
    def of(cls, **given) -> Selection:
        """A selection from keyword filters; None and empty values select everything."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise TypeError(f"unknown filter {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        return cls(**{name: value for name, value in given.items() if value is not None and value != ()})

    def as_dict(self) -> dict:
        """The selection as plain JSON values: agent, study, since, until and source always (the audit
        report's `filters`, in that order), then any other filter that is set; sources as given."""
        always = ("agent", "study", "since", "until", "source")
        names = [*always, *(f.name for f in fields(self) if f.name not in always)]
        out = {}
        for name in names:
            value = getattr(self, name)
            if value is None and name not in always:
                continue
            if name == "source":
                value = [_as_text(path) for path in ([value] if isinstance(value, str) else list(value or ()))]
            out[name] = _plain(value)
        return out

    def without_source(self) -> Selection:
        return replace(self, source=None)

    def chooses_citations(self) -> bool:
        """Whether a filter on the citation's own fields is set (a subject with no citation fails it)."""
        return self.where(scope="citation")[0] != "TRUE"

    def chooses_copies(self) -> bool:
        """Whether a filter on the stored copy (agent, task, time, source) is set."""
        return self.where(scope="copy")[0] != "TRUE"

    def where(self, prefix: str = "", scope: str = "all") -> tuple[str, list]:
        """A WHERE condition over a relation with the `claim_citations` / `citation_uses` columns.

        `scope` "citation" keeps the conditions on the citation's own fields, "copy" those on the
        stored copy (agent, task, task time, source file: `source_path`, `source_sha256`), "all" both.
        """
        conditions: list[str] = []
        params: list = []
        for name, column in _TEXT_COLUMNS.items():
            if scope == "all" or (scope == "copy") == (name in _COPY_FILTERS):
                _text_condition(prefix + column, getattr(self, name), conditions, params)
        if scope != "citation":
            self._time(prefix, conditions, params)
            self._source(prefix, conditions, params)
        if scope != "copy":
            self._citation(prefix, conditions, params)
        return " AND ".join(conditions) or "TRUE", params

    def _time(self, prefix: str, conditions: list[str], params: list) -> None:
        if self.since is not None:
            conditions.append(f"{prefix}timestamp >= ?")
            params.append(moment(self.since, end=False))
        if self.until is not None:
            end = moment(self.until, end=True)
            before_next_day = is_date(self.until) and end != LAST_MOMENT
            conditions.append(f"{prefix}timestamp {'<' if before_next_day else '<='} ?")
            params.append(end)

    def _source(self, prefix: str, conditions: list[str], params: list) -> None:
        """Rows stored from the given paths, or stored under another path from the same bytes."""
        if self.source is None:
            return
        given = [self.source] if isinstance(self.source, str) else list(self.source)
        if not given:
            return
        direct, direct_params = _path_match(f"{prefix}source_path", given)
        aliased, alias_params = _path_match("a.path", given)
        conditions.append(
            f"({direct} OR EXISTS (SELECT 1 FROM sources a WHERE a.alias_of = {prefix}source_path "
            f"AND a.sha256 = {prefix}source_sha256 AND {aliased}))"
        )
        params += direct_params + alias_params

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


LAST_MOMENT = datetime.max.replace(tzinfo=UTC)
"""Where --until 9999-12-31 ends: the last day Python's dates have has no next day."""


def moment(value: str | datetime | date, end: bool) -> datetime:
    """A point in time; a bare date means its start (for --since) or the start of the next day (--until),
    the last day's end being `LAST_MOMENT`."""
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            option = "--until" if end else "--since"
            raise UsageError(f"{value!r} is not an ISO-8601 date or time", option) from None
    if not isinstance(value, datetime):
        if end and value == date.max:
            return LAST_MOMENT
        value = datetime.combine(value + timedelta(days=1) if end else value, time())
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _plain(value):
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return value.isoformat() if isinstance(value, (date, datetime)) else list(value)


_GLOB_CHARS = frozenset("*?[")


def _path_match(column: str, given: list[str]) -> tuple[str, list]:
    alternatives, params = [], []
    for value in given:
        patterns, glob = source_patterns(value)
        for pattern in patterns:
            # the path as written always matches (a name may hold `[` or `*`); a glob matches besides
            alternatives.append(
                f"({column} = ? OR starts_with({column}, ?)" + (f" OR {column} GLOB ?)" if glob else ")")
            )
            params += [pattern, pattern.rstrip("/") + "/", *([pattern] if glob else [])]
    return "(" + " OR ".join(alternatives) + ")", params


def source_patterns(given: str) -> tuple[list[str], bool]:
    """A source value as stored paths are written (absolute), and whether it is a glob.

    A relative value is taken from the working directory; a glob starting with `*` is used as given.
    Bytes of a name that are not UTF-8 are written as ingest archived them (\\xNN); a value in UTF-8 that
    holds such an escape is also taken as written, as a name printed by the archiver (`b\\xff.jsonl`).
    """
    if given in ("-", "<stdin>"):
        return ["<stdin>"], False
    if is_store_url(given):  # a task store's table: `postgresql://user@host:port/db#table`, or `#*` for all
        given = store_source(given)
        return [given], any(char in _GLOB_CHARS for char in given)
    glob = any(char in _GLOB_CHARS for char in given)
    path = given if glob and given.startswith("*") else os.path.abspath(given)
    return list(dict.fromkeys([shown(path), _as_text(path)])), glob


def _as_text(path: str) -> str:
    """A path given as text as it was written; one holding bytes that are not UTF-8 as ingest names it."""
    return shown(path) if any("\udc80" <= char <= "\udcff" for char in path) else path
