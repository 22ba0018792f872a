"""What the archiver takes from an archive file or a lake's catalog: the rows of its tables, never its SQL.

Whoever can write the file or the catalog can put SQL there: a view that reads a file or connects to a
host when it is bound, a macro named like a built-in function (DuckDB finds the database's own functions
before its built-ins), a view where a table should be. So the archiver binds none of it. Its views are the
package's own (`views.VIEWS`), made as temporary views on every connection and cursor it opens
(`views.define`, `views.cursor`), which DuckDB finds before the database's; and before anything is read, the
database is looked at through DuckDB's listings of its tables, views and functions, which bind nothing:

- every table the migrations make must be a table of the archive, with the columns and types the migrations
  give it (not missing, not retyped, not replaced by a view), or the archive is refused as damaged in one
  line (`ArchiveDamagedError`);
- a function (a macro, a table macro) the archive defines is the archive's, never the package's: it is
  refused too, since it could stand in for a built-in the archiver calls;
- a stored view that is not the package's, or not as the package defines it, changes nothing the archiver
  runs: `db check` names it (`stored_sql_problems`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os

import duckdb

from ..offline import cache_directory
from .backend import Location
from .migrations import BOOKKEEPING, available
from .refusals import ArchiveDamagedError, refuse_damaged

__all__ = ["ArchiveDamagedError", "refuse_damaged"]


@functools.cache
def expected_tables() -> dict[str, tuple[tuple[str, str], ...]]:
    """Each table the migrations make, and its columns' names and DuckDB types in order: the migrations run on
    an empty in-memory database (DuckDB's own spelling of every type, whatever the catalog), once per machine
    for these migrations and this DuckDB (kept in the user's cache: 100 ms saved on every command)."""
    migrations = available()
    key = hashlib.sha256(
        "\n;\n".join([duckdb.__version__, *(m.name + "\n" + m.sql() for m in migrations)]).encode()
    ).hexdigest()[:16]
    kept = os.path.join(_cache(), f"schema-{key}.json")
    with contextlib.suppress(OSError, ValueError), open(kept, encoding="utf-8") as handle:
        return {table: tuple(map(tuple, columns)) for table, columns in json.load(handle).items()}
    tables = _migrated(migrations)
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        made = f"{kept}.{os.getpid()}"
        with open(made, "w", encoding="utf-8") as handle:
            json.dump(tables, handle)
        os.replace(made, kept)
    return tables


def _migrated(migrations, views: dict[str, str] | None = None):
    """The tables (as `expected_tables`) of an in-memory database the migrations made; with `views` (name to SQL),
    the SQL DuckDB stores for each of them made there as well."""
    with duckdb.connect(config={"autoload_known_extensions": False, "autoinstall_known_extensions": False}) as con:
        con.execute(BOOKKEEPING)
        for migration in migrations:
            con.execute(migration.sql())
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
            "AND table_name IN (SELECT table_name FROM duckdb_tables()) ORDER BY table_name, column_index"
        ).fetchall()
        for name, sql in (views or {}).items():
            con.execute(f"CREATE VIEW {name} AS {sql}")
        stored = dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        tables.setdefault(table, []).append((column, kind))
    made = {table: tuple(columns) for table, columns in tables.items()}
    return (made, stored) if views is not None else made


CHECKED_KEPT = 256
"""Archive files remembered as found to plant nothing (`unplanted`), the most recent first."""


def identity(location: Location) -> str | None:
    """The state of the archive file, or of a lake's catalog file, as the file system tells it (device, inode,
    size, modification and change times, and those of its write-ahead log): any write changes it. None for a
    PostgreSQL catalog, which has no file here."""
    if location.catalog == "postgres":
        return None
    path = os.path.realpath(location.catalog_path)
    states = [path, duckdb.__version__]
    for side in ("", ".wal", "-wal"):
        try:
            found = os.stat(path + side)
        except OSError:
            states.append("-")
            continue
        states.append(f"{found.st_dev}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}")
    return hashlib.sha256("\n".join(states).encode()).hexdigest()


def _cache() -> str:
    """Where the archiver keeps what its checks found, in the user's cache."""
    return os.path.join(cache_directory(), "checks")


def _checked(state: str) -> str:
    return os.path.join(_cache(), "unplanted", state)


def unplanted(state: str | None) -> bool:
    """Whether the archive in `state` (`identity`, taken before it was looked at) was found to plant nothing:
    DuckDB's listing of functions costs 30 to 70 ms, on every command; a file written since is looked at again."""
    return state is not None and os.path.exists(_checked(state))


def remember_unplanted(state: str | None) -> None:
    """Remember that the archive in `state` plants nothing (`unplanted`), forgetting the oldest past `CHECKED_KEPT`."""
    if state is None:
        return
    with contextlib.suppress(OSError):
        folder = os.path.dirname(_checked(state))
        os.makedirs(folder, exist_ok=True)
        open(_checked(state), "w").close()
        kept = sorted(os.scandir(folder), key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
        for entry in kept[CHECKED_KEPT:]:
            os.remove(entry.path)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def planted(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What in the archive stands where DuckDB would find it before the package's SQL: a view named as one
    of the archive's tables, a function of the archive's own. Read from DuckDB's listings (no view is bound),
    before anything else is read. One line each."""
    tables = expected_tables()
    found = [
        f"{name} is a view, not the archive's table"
        for (name,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND NOT temporary"
        ).fetchall()
        if name in tables
    ]
    found += [
        f"it defines a {kind.replace('_', ' ')} {name}() of its own, which would stand in for DuckDB's"
        for name, kind in con.execute(
            "SELECT DISTINCT function_name, function_type FROM duckdb_functions() "
            "WHERE database_name = current_database() ORDER BY ALL"
        ).fetchall()
    ]
    return found


def table_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """How the archive's tables differ from those its migrations make: missing, of other columns or types.
    Read from each table's listing of columns in one query (after `planted`: none of them is a view, so none
    is bound), and from DuckDB's listing of tables only when one is missing. One line each."""
    expected = expected_tables()
    database = con.execute("SELECT current_database()").fetchone()[0]
    try:
        present, columns = set(expected), _columns(con, database, list(expected))
    except duckdb.CatalogException:
        present = {
            name
            for (name,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'", [database]
            ).fetchall()
        }
        columns = _columns(con, database, [name for name in expected if name in present])
    problems = [f"its table {name} is missing" for name in expected if name not in present]
    for name in expected:
        if name in present:
            problems += _column_problems(name, expected[name], columns.get(name, []))
    return problems


def _columns(con: duckdb.DuckDBPyConnection, database: str, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each of `tables` of the archive's main schema: its columns' names and types, in order."""
    if not tables:
        return {}
    prefix = f"{_quoted(database)}.main."
    listing = " UNION ALL ".join(
        f"SELECT {i} AS t, cid, name, type FROM pragma_table_info({_literal(prefix + _quoted(name))})"
        for i, name in enumerate(tables)
    )
    columns: dict[str, list[tuple[str, str]]] = {}
    for index, _cid, name, kind in con.execute(f"SELECT * FROM ({listing}) ORDER BY t, cid").fetchall():
        columns.setdefault(tables[index], []).append((name, kind))
    return columns


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _column_problems(table: str, expected: tuple[tuple[str, str], ...], found: list[tuple[str, str]]) -> list[str]:
    have = dict(found)
    problems = []
    for column, kind in expected:
        if column not in have:
            problems.append(f"its column {table}.{column} is missing")
        elif have[column] != kind:
            problems.append(f"its column {table}.{column} is {have[column]}, not {kind}")
    known = {column for column, _kind in expected}
    problems += [
        f"its table {table} has a column {column} the archiver does not make" for column in have if column not in known
    ]
    return problems


def stored_sql_problems(con: duckdb.DuckDBPyConnection, package: dict[str, str]) -> list[str]:
    """The archive's stored views that are not the package's (`package`: name to SQL), or not as the package
    defines them: compared as DuckDB parses the SQL it stores for each (never bound) with that of the package's
    views made in an empty database. One line each."""
    rows = con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE database_name = current_database() AND NOT temporary "
        "AND NOT internal ORDER BY view_name"
    ).fetchall()
    _tables, made = _migrated(available(), package)
    found = [
        f"{name}: a table the archiver does not make (it never reads it)"
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
        ).fetchall()
        if name not in expected_tables()
    ]
    for name, sql in rows:
        if name not in package:
            found.append(f"{name}: a view the archiver does not make (it never reads it)")
        elif _parsed(con, _body(sql, name)) != _parsed(con, _body(made[name], name)):
            found.append(f"{name}: a view whose SQL is not the archiver's (it runs its own)")
    return found


def _body(statement: str, name: str) -> str:
    """The query of a stored `CREATE VIEW name AS query;`."""
    head = statement.find(" AS ", statement.find(name) + len(name) if name in statement else 0)
    return statement[head + 4 :].rstrip().rstrip(";") if head >= 0 else statement


def _parsed(con: duckdb.DuckDBPyConnection, query: str):
    """The parse tree of `query`, less where each piece stood in the text and what DuckDB drops when it stores a
    view in a file (a CTE's MATERIALIZED)."""
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0])
    return _without(tree, {"query_location", "materialized"})


def _without(tree, keys: set[str]):
    if isinstance(tree, dict):
        return {k: _without(v, keys) for k, v in tree.items() if k not in keys}
    if isinstance(tree, list):
        return [_without(v, keys) for v in tree]
    return tree
