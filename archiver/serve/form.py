"""The search form: exactly the filters of `Selection`, as `archiver.query.filters.FILTERS` declares them
for the command line too, and back from a query string."""

from __future__ import annotations

from ..errors import UsageError
from ..query.filters import FILTERS, Filter
from ..query.selection import Selection


def filters() -> tuple[Filter, ...]:
    return FILTERS


ANSWERS = {
    "has_warnings": ("with warnings", "without warnings"),
    "valid": ("valid", "invalid"),
    "inferred": ("type lost (inferred)", "typed"),
}
"""A choice's two answers on the form, in words (its flags are the command line's)."""


def answers(item: Filter) -> tuple[str, str]:
    return ANSWERS.get(item.name, item.choices)


def selection(params, only: tuple[str, ...] | None = None) -> Selection:
    """The `Selection` a query string asks for (a value empty means no filter; a text filter repeated
    means any of its values; a choice is `yes` or `no`)."""
    given: dict = {}
    for item in filters():
        if only is not None and item.name not in only:
            continue
        values = [v for v in params.getlist(item.name) if v.strip()]
        if not values:
            continue
        if item.kind in ("text", "source"):
            given[item.name] = values
        elif item.kind == "choice":
            if values[0] not in ("yes", "no"):
                raise UsageError(f"{values[0]!r} is not yes or no", item.name)
            given[item.name] = values[0] == "yes"
        elif item.kind == "number":
            try:
                given[item.name] = float(values[0])
            except ValueError:
                raise UsageError(f"{values[0]!r} is not a number", item.name) from None
        else:
            given[item.name] = values[0]
    try:
        return Selection.of(**given)
    except UsageError as exc:
        raise UsageError(str(exc), exc.option.lstrip("-").replace("-", "_") if exc.option else None) from None


def fields(params, only: tuple[str, ...] | None = None) -> list[tuple[Filter, list[str]]]:
    """Each filter with the values the query string gives it (one empty box for a text filter without)."""
    return [
        (item, [v for v in params.getlist(item.name) if v] or [""])
        for item in filters()
        if only is None or item.name in only
    ]
