"""The filters of a `Selection`, declared once, as data: the command line's options (`cli.selection_options`),
the web view's search form (`serve.form`) and the Python API's keyword arguments (`Selection.of`) are all
made from `FILTERS`, and a test checks that the three agree. A new filter is one entry here and one field of
`Selection` (with how it narrows the SQL).

A text filter also names where its values are in the archive (`values`), so that a shell completes them:
`archiver query claims --study Ver<TAB>`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Filter:
    name: str  # the Selection field, and the query string's name
    kind: str  # text (repeatable) | time | number | choice (a --flag/--other-flag pair) | source (repeatable)
    label: str  # in words, for people: the search form's label
    help: str  # the command line's help
    choices: tuple[str, str] = ("", "")  # a choice's two flags, "--valid" and "--invalid"
    values: str | None = None  # SQL of the archive's values starting with $1 (shell completion)

    @property
    def option(self) -> str:
        """The option as typed on the command line: `--min-n`, or a choice's first flag."""
        return self.choices[0] or "--" + self.name.replace("_", "-")


def _text(name: str, label: str, help: str, column: str, table: str = "citations") -> Filter:
    values = f"SELECT DISTINCT {column} FROM {table} WHERE starts_with({column}, $1) ORDER BY 1 LIMIT 200"
    return Filter(name, "text", label, help + " Exact, or a glob with *.", values=values)


FILTERS: tuple[Filter, ...] = (
    _text("study", "Study", "Study name.", "study"),
    _text("period", "Period", "Period (wave, date range, version).", "period"),
    _text("column", "Source column", "Source column.", "source_column"),
    _text("table", "Source table", "Source table.", "source_table"),
    _text("function", "Source function", "Source function.", "source_function"),
    _text("weight", "Weight", "Weight column.", "weight"),
    _text("agent", "Agent", "Agent name (from its agent card).", "name", "agent_cards"),
    _text("task", "Task", "Task id.", "task_id", "results"),
    Filter("since", "time", "From", "Task time at or after (ISO date or timestamp)."),
    Filter("until", "time", "Until", "Task time at or before (a bare date includes that day)."),
    Filter(
        "has_warnings",
        "choice",
        "Warnings",
        "Citations with (or without) warnings.",
        ("--has-warnings", "--no-warnings"),
    ),
    Filter("min_n", "number", "Smallest base n", "Smallest base n."),
    Filter("max_n", "number", "Largest base n", "Largest base n."),
    Filter("valid", "choice", "Valid citation", "Only valid (or invalid) citations.", ("--valid", "--invalid")),
    Filter(
        "inferred",
        "choice",
        "Media type lost",
        "Only type-lost probable citations (or only those with their media type).",
        ("--inferred", "--typed"),
    ),
    Filter(
        "source",
        "source",
        "Source file",
        "Source file: a path (relative or absolute; a directory means every file under it) or a glob. "
        "A file stored from the same bytes under another path is selected too.",
    ),
)
"""Every filter, in the order the command line's help and the search form show them."""


RESULT_IDS = """SELECT DISTINCT id FROM (SELECT task_id AS id FROM results UNION ALL SELECT context_id FROM results
    UNION ALL SELECT message_id FROM results) WHERE starts_with(id, $1) ORDER BY 1 LIMIT 200"""
"""The ids `archiver show` takes (tasks, contexts, messages) starting with $1 (shell completion)."""


def archive_values(db: str | None, values: str, prefix: str) -> list[str]:
    """The values the SQL `values` finds in the archive file `db` (else $ARCHIVER_DB, else
    ./archive.duckdb) starting with `prefix`, for a shell completing them; none when it is no local archive
    or cannot be read now (a writer holds it, its schema is older): completing never waits, changes or says
    anything."""
    import duckdb  # here: the command line reads `FILTERS` as it starts, and starts fast

    path = db or os.environ.get("ARCHIVER_DB") or "archive.duckdb"
    if ":" in path.split("/", 1)[0] or not os.path.isfile(path):
        return []
    try:
        with duckdb.connect(path, read_only=True, config={"enable_external_access": False}) as con:
            return [value for (value,) in con.execute(values, [prefix]).fetchall() if value is not None]
    except duckdb.Error:
        return []
