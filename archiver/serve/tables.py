"""A list as a table people read (after Datasette's table view): a default set of columns per list, the
others chosen by `?_col=` (repeated) and the column menu, headings in words, each cell formatted and
linked, a long value whole on hover; and the facets beside it (how many rows per study, period...),
each a link that narrows the list."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from markupsafe import Markup

from ..errors import UsageError
from ..render.paths import display_text, holds_path
from .cells import fmt, heading, link, measures, shown_path, source
from .urls import changed

DEFAULTS = {
    "claims": ("status", "result", "value", "measures", "study", "period", "source", "base_n", "warnings"),
    "citations": ("valid", "study", "period", "source", "base_n", "warnings", "claims", "results", "agents"),
    "impact": ("kind", "id", "claims", "results", "citations"),
    "findings": ("severity", "rule", "result", "agent", "detail", "source_path", "locator"),
    "small": ("study", "period", "source_column", "base_name", "base_n", "warnings", "claims", "results", "agents"),
    "conflicts": ("result", "detail", "source_path", "locator"),
}
"""The columns each list shows unless `?_col=` chooses others (or chose them before: `remembered`), the
status and what identifies a row first, and the order of any choice: these, then the others in the
list's own order."""
DEFAULT_CHOICE = "_default"
"""`?_col=_default`: the list's default columns, forgetting a choice."""

COMPUTED = {
    "measures": ("cell", "pointer", "source_column"),
    "source": ("source_function", "source_table", "source_column"),
    "result": ("task_id", "message_id"),
}
"""Columns made of others (and the fields they need): what a claim measures, a citation's source, the
task or (where there is none) the message a row is about."""
SORTS_BY = {"measures": "cell", "source": "source_column", "result": "task_id"}

_COLUMN = ("source_column", "study", "source_table")
_PERIOD = ("period", "study")
FACETS = {
    "claims": {"study": ("study",), "period": _PERIOD, "source_column": _COLUMN, "agent": ("agent",)},
    "citations": {"study": ("study",), "period": _PERIOD, "source_column": _COLUMN},
    "impact": {},
    "findings": {"rule": ("rule",), "severity": ("severity",), "agent": ("agent",)},
}
"""The facets of each list, and the fields each counts a value by: its own, then those telling apart two
values of one name (a column is its study's and table's: `visits_pw` of two studies is two quantities,
never one count; a period is its study's: W6 of one study is not W6 of another)."""
FACET_PARAMETERS = {"source_column": "column", "source_table": "table"}
"""A field's filter where it is not named as the field."""

HASHES = frozenset({"citation_hash", "result_key", "source_sha256"})
PROSE = frozenset({"warnings", "problems", "detail", "base_name", "verdict_reason", "status"})
"""Fields of sentences: their cells wrap between words (never inside one), the others stay on one line."""
HASH_SHOWN = 12


@dataclass
class Column:
    name: str
    heading: str
    sort: str | None  # the address that sorts the list by it
    numeric: bool


@dataclass
class Grid:
    """A page of a list as its table shows it."""

    columns: list[Column]
    rows: list[list[tuple[str, Markup]]]  # per row, each cell's class and HTML
    offered: list[tuple[str, str, bool]]  # every column the menu offers: name, heading, shown
    kept: list[tuple[str, str]]  # the query's other parameters, kept by the column menu's form
    remember: tuple[str, str] | None = None  # the cookie keeping this list's choice of columns, if one was made


def offered(kind: str, fields: tuple[str, ...]) -> list[str]:
    """The columns a list can show: its computed ones whose fields it has, then its fields."""
    extra = [name for name, needs in COMPUTED.items() if all(f in fields for f in needs)]
    return [*extra, *fields]


def chosen(request, kind: str, fields: tuple[str, ...]) -> list[str]:
    """The columns asked for with `?_col=`, else those last asked for on this list (its cookie), else the
    list's defaults; ordered as `DEFAULTS` says."""
    can = offered(kind, fields)
    asked = [c for c in request.query_params.getlist("_col") if c]
    if DEFAULT_CHOICE in asked:  # the menu's "default columns" button, sent with the boxes ticked
        asked = []
    for name in asked:
        if name not in can:
            shown = name if len(name) <= 40 else name[:40] + "…"
            raise UsageError(f"{shown!r} is not a column of this list; one of {', '.join(can)}", "_col")
    if not asked and "_col" not in request.query_params:
        asked = [c for c in request.cookies.get(cookie_name(kind), "").split(".") if c in can]
    first = [c for c in DEFAULTS.get(kind, fields) if c in can]
    if not asked:
        return first
    return [c for c in first if c in asked] + [c for c in can if c in asked and c not in first]


def cookie_name(kind: str) -> str:
    return f"columns-{kind}"


def remembered(request, kind: str) -> tuple[str, str] | None:
    """The cookie that keeps a choice of columns made with `?_col=` for the list's next visits (empty
    when the choice is the defaults)."""
    asked = [c for c in request.query_params.getlist("_col") if c]
    if "_col" not in request.query_params:
        return None
    return cookie_name(kind), "" if DEFAULT_CHOICE in asked else ".".join(asked)


def grid(request, kind: str, fields: tuple[str, ...], rows: list[dict], sortable: bool = False) -> Grid:
    names = chosen(request, kind, fields)
    order_by = request.query_params.get("order_by") or ""
    columns = []
    for name in names:
        key = SORTS_BY.get(name, name)
        sort = None
        if sortable:
            sort = changed(request, drop=("page",), order_by=f"-{key}" if order_by == key else key)
        numeric = bool(rows) and all(_is_number(row.get(name)) for row in rows if row.get(name) is not None)
        columns.append(Column(name, heading(name), sort, numeric and any(row.get(name) is not None for row in rows)))
    cells = [[_cell(column, row) for column in columns] for row in rows]
    kept = [(k, v) for k, v in request.query_params.multi_items() if k not in ("_col", "page") and v != ""]
    menu = [(name, heading(name), name in names) for name in offered(kind, fields)]
    return Grid(columns, cells, menu, kept, remembered(request, kind))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(column: Column, row: dict) -> tuple[str, Markup]:
    name, value = column.name, row.get(column.name)
    if name == "measures":
        return "str", Markup(escape(measures(row)))
    if name == "source":
        return "str", Markup(escape(source(row)))
    if name == "result":
        field = "task_id" if row.get("task_id") else "message_id"
        return "str", link(field, row.get(field), row)
    if holds_path(row, name) and value:
        return "str", shown_path(value)
    if name in HASHES and isinstance(value, str) and len(value) > HASH_SHOWN:
        return "str", Markup(f'<span title="{escape(value)}">{escape(value[:HASH_SHOWN])}…</span>')
    if name in PROSE and value:
        return "long", whole_words(display_text(fmt(value)))
    return "num" if column.numeric else "str", link(name, value, row)


def whole_words(text: str) -> Markup:
    """`text` that wraps between words only: a word a browser would break at a hyphen or a slash
    ("80be-e385", "/work/wt-web/...") is kept on one line."""
    words = [
        f'<span class="word">{escape(word)}</span>' if any(c in word for c in "-/") else escape(word)
        for word in text.split(" ")
    ]
    return Markup(" ".join(words))


@dataclass
class FacetValue:
    value: str
    label: str  # the value, and its source where the facet's values come from several
    count: int
    toggle: str  # the address narrowed to it, or (chosen) no longer narrowed by it
    chosen: bool
    filters: dict[str, str]  # the filters narrowing the list to it


@dataclass
class Facet:
    name: str
    heading: str
    values: list[FacetValue]
    truncated: bool  # the list holds more values than these
    without: int  # rows without a value

    def as_dict(self, twin) -> dict:
        """As the JSON twin's `facet_results` holds it (Datasette's shape): `twin` makes an address a JSON one."""
        return {
            "name": self.name,
            "results": [
                {"value": v.value, "label": v.label, "count": v.count, "toggle_url": twin(v.toggle),
                 "selected": v.chosen, "filters": v.filters}
                for v in self.values
            ],
            "truncated": self.truncated,
            "without_value": self.without,
        }  # fmt: skip


def facet_list(request, found) -> list[Facet]:
    """The facets of a list (`data.Page.facets`), each value a link narrowing the list to it (a value
    chosen: a link that no longer narrows it)."""
    out = []
    for name, counted in found.facets.items():
        sources = {key[1:] for key, _ in counted.values}
        values = [_facet_value(request, counted.keys, key, n, len(sources) > 1) for key, n in counted.values]
        if values:
            out.append(Facet(name, heading(name), values, counted.truncated, counted.without))
    return out


def _facet_value(request, keys: tuple[str, ...], key: tuple, n: int, sourced: bool) -> FacetValue:
    """One value of a facet: labelled with its source (`visits_pw · Meridian Shopper Panel / meridian_panel`)
    when the facet's values come from several."""
    filters = {FACET_PARAMETERS.get(k, k): v for k, v in zip(keys, key, strict=True) if v is not None}
    own = FACET_PARAMETERS.get(keys[0], keys[0])
    chosen = all(value in request.query_params.getlist(name) for name, value in filters.items())
    toggle = changed(request, drop=("page", own)) if chosen else changed(request, drop=("page",), **filters)
    source = " / ".join(v for v in key[1:] if v is not None)
    label = f"{key[0]} · {source}" if sourced and source else key[0]
    return FacetValue(key[0], label, n, toggle, chosen, filters)
