"""`archiver sql`: only statements that read. DuckDB's own parser says what a statement does: its kind
here, and every function and table it reaches on the allow-list (`allowlist`)."""

from __future__ import annotations

import os
import re

import duckdb

from .allowlist import NotReadOnlyError, check_allowed

__all__ = ["NotReadOnlyError", "needs_extension", "read_only_statement", "utf8_text"]

_EXPLAIN = re.compile(r"^\s*explain\s+(analy[sz]e\s+)?", re.IGNORECASE)
_WHAT = {
    "INSERT": "inserts rows",
    "UPDATE": "updates rows",
    "DELETE": "deletes rows",
    "MERGE_INTO": "merges rows",
    "CREATE": "creates something",
    "CREATE_FUNC": "creates a function",
    "DROP": "drops something",
    "ALTER": "alters the schema",
    "COPY": "copies data in or out",
    "COPY_DATABASE": "copies a database",
    "EXPORT": "exports the database",
    "ATTACH": "attaches a database",
    "DETACH": "detaches a database",
    "LOAD": "installs or loads an extension",
    "EXTENSION": "manages extensions",
    "SET": "changes a setting",
    "VARIABLE_SET": "sets a variable",
    "PRAGMA": "runs a pragma",
    "TRANSACTION": "controls a transaction",
    "VACUUM": "vacuums",
    "ANALYZE": "analyzes tables",
    "CALL": "calls a procedure",
    "PREPARE": "prepares a statement",
    "EXECUTE": "executes a statement",
}


_EXTENSION = re.compile(r"requires the extension (\w+)|exists in the (\w+) extension", re.IGNORECASE)
"""DuckDB's words for a file (a URL) or a function that an extension it has not loaded would handle."""


def read_only_statement(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """The one SELECT (or EXPLAIN of one) in `sql`, without a closing semicolon (so that a query can
    wrap it); anything else is refused with the reason."""
    utf8_text(sql, "the statement")
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise NotReadOnlyError(f"cannot parse the statement: {exc}") from None
    if len(statements) != 1:
        raise NotReadOnlyError(f"give exactly one statement (got {len(statements)})")
    statement = statements[0]
    kind = statement.type.name
    if kind == "EXPLAIN":
        inner = _EXPLAIN.sub("", sql, count=1)
        if inner != sql:
            read_only_statement(con, inner)
            return sql.rstrip().rstrip(";")
    if kind != "SELECT":
        what = _WHAT.get(kind, f"is a {kind} statement")
        raise NotReadOnlyError(f"refused: this statement {what}; `archiver sql` runs read-only SELECT queries only")
    check_allowed(con, statement.query)
    return sql.rstrip().rstrip(";")


def utf8_text(text: str, what: str) -> str:
    """`text` if it is UTF-8 text; else a usage error naming its first byte that is not (a command line's
    bytes that are not UTF-8 reach Python as lone surrogates, which DuckDB cannot take)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = os.fsencode(text[exc.start])[0] if 0xDC80 <= ord(text[exc.start]) <= 0xDCFF else None
        said = f"byte 0x{byte:02x}" if byte is not None else f"character U+{ord(text[exc.start]):04X}"
        raise NotReadOnlyError(f"{what} is not UTF-8 text ({said} at {exc.start}): give it in UTF-8") from None
    return text


def needs_extension(exc: duckdb.Error) -> NotReadOnlyError | None:
    """The refusal of a SELECT that needs an extension DuckDB would otherwise fetch or load (httpfs for a
    URL, a scanner for another database's file); None for any other error."""
    found = _EXTENSION.search(str(exc))
    if found is None:
        return None
    name = next(group for group in found.groups() if group)
    return NotReadOnlyError(
        f"refused: this statement needs DuckDB's {name} extension; `archiver sql` never installs or "
        "loads extensions, so nothing reaches the network (local CSV, Parquet and JSON files can be read)"
    )
