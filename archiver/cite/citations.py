"""Citations v1 Parts: recognition, flattening and the spec's validity rules."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date
from functools import lru_cache
from typing import Any

from ..canonical import compact_json, content_hash

MEDIA_TYPE = "application/vnd.upperhand.citations+json"
EXTENSION_URI = "https://standards.upperhandai.com/ext/citations/v1"
REQUIRED_KEYS = ("study", "period", "base", "source")
KNOWN_KEYS = frozenset({*REQUIRED_KEYS, "fielded", "weight", "warnings"})
_HASHED_KEYS = tuple(sorted(KNOWN_KEYS))
"""The keys a citation's hash covers, in the order canonical JSON writes them."""
PROBABLE_THRESHOLD = 3


def is_citation_media_type(media_type: str | None) -> bool:
    return media_type is not None and (
        media_type == MEDIA_TYPE or media_type.split(";")[0].strip().lower() == MEDIA_TYPE
    )


def is_probable_citation(data: Any) -> bool:
    """A data object carrying at least three of the four required top-level keys."""
    return (
        isinstance(data, dict)
        and ("study" in data) + ("period" in data) + ("base" in data) + ("source" in data) >= PROBABLE_THRESHOLD
    )


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


def citation_of(data: Any, media_type: str | None) -> Citation | None:
    """The citation a data Part carries, typed or probable; None when it carries none."""
    typed = is_citation_media_type(media_type)
    if not typed and not is_probable_citation(data):
        return None
    citation = Citation(inferred=not typed)
    if not isinstance(data, dict):
        citation.problems.append(f"citation data is {_type_name(data)}, not an object")
        citation.citation_hash = content_hash(data)
        return citation
    problems = citation.problems
    citation.study = _required_string(data, "study", problems)
    citation.period = _required_string(data, "period", problems)
    base = _required_object(data, "base", problems)
    if base is not None:
        citation.base_name = _required_string(base, "name", problems, "base.")
        citation.base_n = _base_n(base, problems)
    source = _required_object(data, "source", problems)
    if source is not None:
        citation.source_table = _required_string(source, "table", problems, "source.")
        citation.source_column = _required_string(source, "column", problems, "source.")
        citation.source_function = _required_string(source, "function", problems, "source.")
    citation.fielded = _optional_string(data, "fielded", problems)
    citation.fielded_start, citation.fielded_end = fielded_dates(citation.fielded)
    citation.weight = _optional_string(data, "weight", problems)
    citation.warnings = _warnings(data.get("warnings"), problems)
    extra = {k: v for k, v in data.items() if k not in KNOWN_KEYS}
    citation.extra = compact_json(extra).decode() if extra else None
    citation.citation_hash = content_hash({k: data.get(k) for k in _HASHED_KEYS})
    return citation


def _type_name(value: Any) -> str:
    """The JSON type of a value with its article: "an array", "a number", "null"."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), f"a {type(value).__name__}")


def _required(obj: dict, key: str, kind: type, problems: list[str], prefix: str = "") -> Any:
    """`obj[key]` when it is present, not null and of `kind` (a string must not be blank); else None, with
    the problem said in `problems`."""
    value = obj.get(key)
    if key not in obj:
        problems.append(f"{prefix}{key} is missing")
    elif value is None:
        problems.append(f"{prefix}{key} is null")
    elif not isinstance(value, kind):
        problems.append(f"{prefix}{key} is {_type_name(value)}, not {_KIND_NAMES[kind]}")
    elif kind is str and not value.strip():
        problems.append(f"{prefix}{key} is empty")
    else:
        return value
    return None


_KIND_NAMES = {str: "a string", dict: "an object"}


def _required_string(obj: dict, key: str, problems: list[str], prefix: str = "") -> str | None:
    value = obj.get(key)
    if type(value) is str and value.strip():  # the usual case, without `_required`'s questions
        return value
    return _required(obj, key, str, problems, prefix)


def _required_object(obj: dict, key: str, problems: list[str]) -> dict | None:
    return _required(obj, key, dict, problems)


def _base_n(base: dict, problems: list[str]) -> float | None:
    n = base.get("n")
    if "n" not in base:
        problems.append("base.n is missing")
    elif n is None:
        problems.append("base.n is null")
    elif isinstance(n, bool) or not isinstance(n, (int, float)):
        problems.append(f"base.n is {_type_name(n)}, not an integer")
    elif isinstance(n, float) and not n.is_integer():
        problems.append(f"base.n is {n!r}, not an integer")
    elif n <= 0:
        problems.append(f"base.n is {_number_text(n)}, not positive")
    else:
        return float(n)
    return float(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else None


def _number_text(n: float) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _optional_string(obj: dict, key: str, problems: list[str]) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"{key} is {_type_name(value)}, not a string")
        return None
    return value


def _warnings(value: Any, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        problems.append("warnings is not an array of strings")
        return (
            [w if isinstance(w, str) else compact_json(w).decode() for w in value]
            if isinstance(value, list)
            else [compact_json(value).decode()]
        )
    return value


def fielded_dates(fielded: str | None) -> tuple[date | None, date | None]:
    """Start and end of an ISO-8601 date or interval ("2026-04-02/2026-04-19")."""
    if not fielded:
        return None, None
    return (_remembered_dates if len(fielded) <= 64 else _dates)(fielded)


def _dates(fielded: str) -> tuple[date | None, date | None]:
    start_text, _, end_text = fielded.partition("/")
    start, end = _date(start_text), _date(end_text) if end_text else None
    return start, end if end_text else start


_remembered_dates = lru_cache(maxsize=4096)(_dates)
"""Many citations share one field period, and dates are immutable: a short one is parsed once."""


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None
