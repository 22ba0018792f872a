"""What `archiver sql` lets reach DuckDB: an allow-list checked on DuckDB's own parse tree.

The statement is parsed by DuckDB (`json_serialize_sql` gives the tree as JSON) and every function it
calls and every table it reads is looked up in what is allowed; anything not on the list is refused,
however it is spelled. Allowed are:

- DuckDB's built-in scalar, aggregate and window functions and macros, as a fresh in-memory DuckDB with
  no extension loaded lists them (`duckdb_functions()`), but for the few that change state, sleep or
  plan another statement (`SIDE_EFFECTS`). Functions of extensions (DuckLake's `ducklake_*`, the
  PostgreSQL, MySQL and SQLite scanners) are never on it, whatever a lake's connection has loaded.
- The table functions of `TABLE_FUNCTIONS`: series, `unnest`, the documented readers of local CSV,
  Parquet and JSON files, and the catalog listings behind `DESCRIBE`, `SHOW` and the reading pragmas.
  Not `checkpoint`, `query`, `read_duckdb`, `postgres_scan`, ...
- The archiver's own tables and views (the package's views, made as temporary views of the connection: never
  a view stored in the archive file or a lake's catalog, `store.trust`), the statement's CTEs, and DuckDB's
  catalog views of `CATALOG_VIEWS`; not another database's (not a lake's metadata catalog).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb

from ..errors import QueryError
from ..store.connection import transaction
from ..store.trust import expected_tables
from ..store.views import VIEWS

SIDE_EFFECTS = frozenset({"nextval", "setseed", "write_log", "json_serialize_plan", "pg_sleep", "sleep_ms"})
"""Built-in functions left off: they advance a sequence, reseed, write DuckDB's log, sleep, or bind another
statement (planning `postgres_scan(...)` already connects)."""

BINDER_FUNCTIONS = frozenset({"unnest", "unlist"})
"""Built-ins that DuckDB's binder handles itself, so `duckdb_functions()` does not list them."""

TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "json_each",
        "json_tree",
        "pragma_table_info",
        "pragma_show",
    }
)

READERS = frozenset(name for name in TABLE_FUNCTIONS if name.startswith(("read_", "parquet_")))
"""The table functions that read files: they may read local files only, named by string literals. A lake on
object storage has DuckDB's httpfs loaded, which would let a URL reach any host, with the lake's credentials."""

NAMING = frozenset({"pragma_table_info", "pragma_show"})
"""The table functions given a table's name: it must be one `sql` may read (a view a lake's catalog stores
would be bound to list its columns)."""

CATALOG_VIEWS = frozenset({"duckdb_tables", "duckdb_views", "duckdb_columns"})
"""DuckDB's listings of tables, views and columns (what `PRAGMA show_tables` reads): names only."""

SHOWN = frozenset({'"tables"', '"databases"'})
"""What `SHOW TABLES` and `SHOW DATABASES` list: names of tables and databases. Not `SHOW ALL TABLES`, which
lists every view's columns, and so binds the views a lake's catalog stores (a planted one connects)."""

_TABLE_REFS = frozenset({"BASE_TABLE", "TABLE_FUNCTION", "JOIN", "SUBQUERY", "EMPTY", "EXPRESSION_LIST", "SHOW_REF"})
_SCHEMAS = frozenset({"", "main", "system", "pg_catalog"})


class NotReadOnlyError(QueryError):
    """A statement that would change the archive, its connection, or files and extensions around it, or
    reach outside the archive. A usage error: the statement given cannot be run as it is."""

    exit_code = 2


@dataclass
class Scope:
    """What a statement may read: the archive's tables and views, the statement's CTEs."""

    con: duckdb.DuckDBPyConnection
    database: str
    ctes: frozenset[str]

    def holds(self, catalog: str, schema: str, table: str) -> bool:
        """Whether `table` (as qualified) is one of the archiver's: a table its migrations make (the archive's
        are checked to be those as it opens: `store.trust`), or, unqualified by the archive's name, one of its
        views, the connection's temporary views, which DuckDB finds first. A view stored in the archive file or
        a lake's catalog is never one: binding it could read a file or reach a host."""
        name = table.lower()
        if catalog in ("", self.database) and schema in ("", "main") and name in expected_tables():
            return True
        return catalog == "" and schema in ("", "main") and name in VIEWS

    def knows(self, function: str) -> bool:
        """Whether the connection has `function`, of an extension or not: a name it has not is a mistake
        to let DuckDB name, not an escape. (Asked only of refused names: listing every function is slow.)"""
        found = self.con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [function])
        return function.lower() in BINDER_FUNCTIONS or found.fetchone()[0] > 0


def check_allowed(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse `query` (one SELECT, `DESCRIBE` or `SHOW`, as DuckDB rewrites a reading pragma) unless every
    function it calls and every table it reads is on the allow-list."""
    # on a lake, one catalog snapshot for every look-up (20 ms each)
    with con.cursor() as cursor, transaction(cursor, commit=False):
        serialized, database = cursor.execute("SELECT json_serialize_sql(?), current_database()", [query]).fetchone()
        tree = json.loads(serialized)
        if tree.get("error"):
            raise NotReadOnlyError(
                f"refused: `archiver sql` runs SELECT, WITH, DESCRIBE and SHOW only ({tree.get('error_message')})"
            )
        _walk(tree, Scope(cursor, database, frozenset(_cte_names(tree))))


@functools.cache
def builtin_functions() -> frozenset[str]:
    """DuckDB's own scalar, aggregate and window functions and macros, those of no extension, less
    `SIDE_EFFECTS`: listed by an in-memory DuckDB that loads nothing by itself."""
    config = {"autoload_known_extensions": False, "autoinstall_known_extensions": False}
    with duckdb.connect(config=config) as fresh:
        rows = fresh.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() "
            "WHERE function_type IN ('scalar', 'aggregate', 'macro')"
        ).fetchall()
    return (frozenset(name.lower() for (name,) in rows) | BINDER_FUNCTIONS) - SIDE_EFFECTS


def _walk(tree, scope: Scope) -> None:
    """Check every object of the parse tree, depth first; a table function's own name is checked against
    `TABLE_FUNCTIONS`, its arguments as any other expression."""
    if isinstance(tree, list):
        for value in tree:
            _walk(value, scope)
    elif isinstance(tree, dict):
        _check_node(tree, scope)
        table_function = "class" not in tree and tree.get("type") == "TABLE_FUNCTION"
        _walk(tree["function"]["children"] if table_function else list(tree.values()), scope)


def _cte_names(tree) -> Iterator[str]:
    if isinstance(tree, list):
        for value in tree:
            yield from _cte_names(value)
    elif isinstance(tree, dict):
        for entry in (tree.get("cte_map") or {}).get("map", []):
            yield entry["key"].lower()
        for value in tree.values():
            yield from _cte_names(value)


def _check_node(node: dict, scope: Scope) -> None:
    if node.get("class") in ("FUNCTION", "WINDOW"):
        _check_function(node, scope)
    elif "class" not in node and "sample" in node and "modifiers" not in node:  # a table reference, not a query node
        _check_table(node, scope)


def _check_function(node: dict, scope: Scope) -> None:
    name = node["function_name"]
    qualified = node.get("schema", "") in _SCHEMAS and node.get("catalog", "") in _SCHEMAS
    if name.lower() in builtin_functions() and qualified:
        return
    if not scope.knows(name):
        raise NotReadOnlyError(f"refused: this statement calls {name}(), which is not a DuckDB function")
    raise NotReadOnlyError(
        f"refused: this statement calls {name}(), which `archiver sql` does not allow (only DuckDB's "
        "built-in functions that read: nothing that writes, checkpoints, sets options or connects elsewhere)"
    )


def _check_table(node: dict, scope: Scope) -> None:
    kind = node["type"]
    if kind not in _TABLE_REFS:
        raise NotReadOnlyError(f"refused: this statement reads a {kind.lower()}, which `archiver sql` does not allow")
    if kind == "TABLE_FUNCTION":
        name = node["function"]["function_name"]
        if name.lower() not in TABLE_FUNCTIONS:
            raise NotReadOnlyError(
                f"refused: this statement calls the table function {name}(), which `archiver sql` does not "
                "allow (only range, generate_series, unnest, json_each, json_tree, pragma_table_info and the "
                "readers of local CSV, Parquet and JSON files)"
            )
        if name.lower() in READERS:
            _check_local(name, node["function"]["children"][:1])
        if name.lower() in NAMING:
            _check_named(name, node["function"]["children"][:1], scope)
    elif kind == "BASE_TABLE":
        _check_relation(node["catalog_name"], node["schema_name"], node["table_name"], scope)
    elif kind == "SHOW_REF" and node["query"] is None:
        _check_shown(node, scope)


def _check_local(reader: str, arguments: list[dict]) -> None:
    """The files a reader is given: string literals (one, or a list of them) naming local files, not URLs."""
    names = arguments
    if names and names[0].get("class") == "FUNCTION" and names[0]["function_name"] in ("list_value", "array_value"):
        names = names[0]["children"]
    for name in names:
        value = name.get("value", {}) if name.get("class") == "CONSTANT" else {}
        if not isinstance(value.get("value"), str):
            raise NotReadOnlyError(f"refused: name the files {reader}() reads with string literals")
        if "://" in value["value"]:
            raise NotReadOnlyError(
                f"refused: {reader}() of {value['value']}: `archiver sql` reads local files only (for a URL it "
                "never installs or loads httpfs, nor uses a lake's): nothing reaches the network"
            )


def _check_named(function: str, arguments: list[dict], scope: Scope) -> None:
    """The table a listing of columns is given: a string literal naming one the statement may read."""
    value = arguments[0].get("value", {}) if arguments and arguments[0].get("class") == "CONSTANT" else {}
    if not isinstance(value.get("value"), str):
        raise NotReadOnlyError(f"refused: name the table {function}() lists with a string literal")
    parts = [part.strip('"') for part in value["value"].split(".")]
    if len(parts) > 3 or not scope.holds(*([""] * (3 - len(parts)) + parts)):
        raise NotReadOnlyError(
            f"refused: {function}() of {value['value']}, which is not a table or view of the archive "
            '(`archiver sql "SHOW TABLES"` lists them)'
        )


def _check_relation(catalog: str, schema: str, table: str, scope: Scope) -> None:
    unqualified = not catalog and not schema
    if unqualified and (table.lower() in scope.ctes or table.lower() in CATALOG_VIEWS):
        return
    if scope.holds(catalog, schema, table):
        return
    name = ".".join(part for part in (catalog, schema, table) if part)
    raise NotReadOnlyError(
        f"refused: this statement reads {name}, which is not a table or view of the archive "
        '(`archiver sql "SHOW TABLES"` lists them; read local files with read_csv, read_parquet or read_json)'
    )


def _check_shown(node: dict, scope: Scope) -> None:
    if node["show_type"] == "SHOW_UNQUALIFIED" and node["table_name"] in SHOWN:
        return
    here = node["catalog_name"] in ("", scope.database) and node["schema_name"] in ("", "main")
    if node["show_type"] == "SHOW_FROM" and here:
        return
    shown = ".".join(part for part in (node["catalog_name"], node["schema_name"], node["table_name"]) if part)
    raise NotReadOnlyError(f"refused: `archiver sql` shows the archive's own tables only, not {shown}")
