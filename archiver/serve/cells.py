"""A value as a table cell shows it: formatted, linked to its own page where it has one, headed in words."""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

from ..render.cells import cell_text
from ..render.layout import name_of
from ..render.paths import display_path
from ..store.views import STAT_WORDS
from .urls import href

LINKED = {
    "study": "study",
    "period": "period",
    "source_column": "column",
    "source_table": "table",
    "agent": "agent",
    "task_id": "result",
    "message_id": "result",
    "context_id": "result",
    "id": None,
}

HEADINGS = {
    "value": "value",
    "measures": "what it measures",
    "source": "source",
    "result": "task or message",
    "pointer": "cell",
    "part_index": "part",
    "task_id": "task",
    "message_id": "message",
    "context_id": "context",
    "artifact_id": "artifact",
    "timestamp": "time",
    "source_path": "file",
    "fielded": "fielded",
    "base_name": "base",
    "base_n": "base n",
    "source_table": "table",
    "source_column": "column",
    "source_function": "function",
    "valid": "valid",
    "problems": "problems",
    "inferred": "type-lost",
    "citation_hash": "citation",
    "rerun_value": "re-derived value",
    "verdict_reason": "why not re-derived",
    "verified_at": "verified at",
    "result_key": "result",
    "locator": "place in file",
    "detail": "what is wrong",
    "kind": "kind",
    "id": "name",
}
"""Each field's heading in words (a field not named here is headed by its own name)."""


def heading(field: str) -> str:
    return HEADINGS.get(field, field.replace("_", " "))


def fmt(value: Any) -> str:
    """A value as a table cell shows it on the web: thousands separated (`render.cells`)."""
    return cell_text(value, grouped=True)


def link(field_name: str, value: Any, row: dict | None = None) -> Markup:
    """A cell's value, linked to its own page where it has one (escaped either way)."""
    text = escape(fmt(value))
    kind = LINKED.get(field_name)
    if field_name == "id" and row is not None:
        kind = {"task": "result", "context": "result", "agent": "agent", "source_file": None}.get(row.get("kind"))
    if value is None or value == "" or kind is None:
        return Markup(text)
    anchor = ""
    if kind == "result" and row is not None and row.get("part_index") is not None:
        anchor = f"#part-{int(row['part_index'])}"
    return Markup(f'<a href="{escape(href(kind, value))}{anchor}">{text}</a>')


def source(row: dict) -> str:
    """A citation's source as a reader names it: `extractShare(kcp_trips, mode_main)`."""
    inside = ", ".join(str(row.get(f)) for f in ("source_table", "source_column") if row.get(f) is not None)
    return f"{row.get('source_function') or '?'}({inside})" if inside or row.get("source_function") else ""


def measures(row: dict) -> str:
    """What a claim measures: the cell it fills as the core names it ("18-34: share", else its pointer
    read as a name), and the column it cites."""
    cell = row.get("cell") or name_of(row.get("pointer") or "")
    return f"{cell}, {row['source_column']}" if row.get("source_column") else cell


def shown_path(path: Any) -> Markup:
    """A source file's path as a cell shows it: relative to the working directory (`display_path`), the
    stored path on hover, never broken at its `/` or `-`."""
    if not path:
        return Markup("")
    return Markup(f'<span class="word" title="{escape(str(path))}">{escape(display_path(str(path)))}</span>')


def stat_words(name: str) -> str:
    """A count's label on the overview (`store.views.STAT_WORDS`, which `archiver stats` shows too)."""
    return STAT_WORDS[name][0] if name in STAT_WORDS else name.replace("_", " ")
