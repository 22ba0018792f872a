"""The search form: exactly the filters of `Selection`, as `selection_options` declares them for the
command line (their names, help and kinds are read from there), and back from a query string."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import click

from ..errors import UsageError
from ..query.selection import Selection


@dataclass(frozen=True)
class Filter:
    name: str  # the Selection field
    label: str  # the option as typed on the command line
    help: str
    kind: str  # text (repeatable) | time | number | choice (a --flag/--other-flag pair)
    choices: tuple[str, str] = ("", "")  # a choice's two flags

    @property
    def words(self) -> str:
        """The filter's label on the web form, in words."""
        return WORDS.get(self.name, self.name.replace("_", " "))

    @property
    def choice_words(self) -> tuple[str, str]:
        """A choice's two answers, in words."""
        return CHOICE_WORDS.get(self.name, self.choices)


WORDS = {
    "since": "from (date or time)",
    "until": "to (date or time)",
    "has_warnings": "warnings",
    "min_n": "base n at least",
    "max_n": "base n at most",
    "valid": "citation",
    "inferred": "media type",
    "source": "source file",
}
"""Each filter's label on the form where its name is not already a word."""
CHOICE_WORDS = {
    "has_warnings": ("with warnings", "without warnings"),
    "valid": ("valid", "invalid"),
    "inferred": ("type lost (inferred)", "typed"),
}


@cache
def filters() -> tuple[Filter, ...]:
    from ..cli import selection_options

    command = selection_options(click.Command("serve-form", callback=lambda **_: None))
    out = []
    for option in reversed(command.params):  # decorating a Command appends each option, last declared first
        if not isinstance(option, click.Option):
            continue
        if option.secondary_opts:
            kind = "choice"
        elif option.multiple:
            kind = "text"
        elif isinstance(option.type, click.types.FloatParamType):
            kind = "number"
        else:
            kind = "time"
        pair = (option.opts[0], option.secondary_opts[0]) if option.secondary_opts else ("", "")
        out.append(Filter(option.name, option.opts[0], option.help or "", kind, pair))
    return tuple(out)


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
        if item.kind == "text":
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
