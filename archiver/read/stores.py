"""Read a live A2A task store (PostgreSQL, MySQL or MariaDB) as sources: one per task table.

A store is read in one read-only snapshot and nothing else: PostgreSQL through DuckDB's postgres scanner
attached READ_ONLY (it opens `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY` and copies
each table out with `COPY (SELECT ...) TO STDOUT`); MySQL and MariaDB through PyMySQL in
`START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY` at REPEATABLE READ. No statement writes, locks
rows or changes a setting of the server; the transaction ends with a rollback.

A table's source is named by the URL without its password or query (`postgresql://user@host:5432/db`)
and `#` and the table. Its bytes are its rows in key order, each serialised by `store_row` on a line
of its own, so an unchanged table is the same bytes again and a changed one differs only in the rows
that changed; the ingest stores each row version once (see `ingest`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import InputError
from ..redact import known, redacted
from .containers import TASK_TABLE_SHAPE, SourceFile, StoreTable, store_row, task_tables, text_cell, undecodable

SCHEMES = {"postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql", "mariadb": "mysql"}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
DEFAULT_SCHEMA = {"postgresql": "public"}
SCOPED_KEY = ("tenant", "owner", "id")
"""The primary key of the JavaScript SDK's task table (the Python SDK's is `id`)."""
STORES_EXTRA = "pip install 'a2a-archiver[stores]'"
FETCH_ROWS = 1000
CONNECT_SECONDS = 10


class StoreError(InputError):
    """A task store that cannot be read as given: a bad URL, a server out of reach, a refused login, a
    missing table or driver. The message names the store without its password."""


@dataclass(frozen=True)
class StoreURL:
    kind: str  # postgresql | mysql
    host: str
    port: int | None
    user: str | None
    database: str
    password: str | None = field(default=None, repr=False)
    options: tuple[tuple[str, str], ...] = ()
    """The URL's query (connection options such as sslmode), the password taken out."""

    @property
    def shown(self) -> str:
        """The URL as archived and printed: no password, no query."""
        user = f"{self.user}@" if self.user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        port = f":{self.port}" if self.port else ""
        return f"{self.kind}://{user}{host}{port}/{self.database}"

    def scrub(self, text: str) -> str:
        """`text` (a driver's message) on one line, the password out of it wherever it appears."""
        return redacted(" ".join(str(text).split()), self.password)


def is_store_url(text: str) -> bool:
    scheme, sep, _ = text.partition("://")
    return bool(sep) and _kind(scheme) is not None


def _kind(scheme: str) -> str | None:
    """postgresql or mysql, for a URL scheme; SQLAlchemy's `+driver` (as in an SDK's settings) is let be."""
    return SCHEMES.get(scheme.lower().partition("+")[0])


def shown(text: str) -> str:
    """A path as given; a store URL as its sources are named (no password, no query; its `#table` kept)."""
    if not is_store_url(text):
        return text
    table = text.partition("#")[2]
    try:
        return parse(text.partition("#")[0]).shown + (f"#{table}" if table else "")
    except StoreError:
        return text.partition("://")[0] + "://..."


def parse(url: str) -> StoreURL:
    """A store URL: `postgresql://user:password@host:port/database?options` (or mysql://, mariadb://)."""
    parts = urlsplit(url)
    kind = _kind(parts.scheme)
    try:
        port = parts.port
    except ValueError:
        port = -1
    options = [(k, v) for k, v in parse_qsl(parts.query) if k != "password"]
    password = unquote(parts.password) if parts.password is not None else dict(parse_qsl(parts.query)).get("password")
    user = unquote(parts.username) if parts.username else None
    known(password)
    store = StoreURL(kind or "", parts.hostname or "", port, user, unquote(parts.path.lstrip("/")), password)
    if kind is None or port == -1 or not store.database or "/" in store.database:
        masked = StoreURL(kind or parts.scheme, store.host, None, user, store.database or "?").shown
        raise StoreError(f"{masked}: not a task-store URL; expected {parts.scheme}://user@host:port/database")
    return StoreURL(kind, store.host or "localhost", port, user, store.database, password, tuple(options))


def snapshot(url: str, tables: Sequence[str] = ()) -> list[SourceFile]:
    """A source for each task table of the store at `url` (the ones named, else every table shaped like
    an A2A SDK's task table), all read in one read-only snapshot."""
    store = parse(url)
    reader = _postgresql if store.kind == "postgresql" else _mysql
    with _told(store), reader(store) as tx:
        found = tx.tables()
        names = list(dict.fromkeys(tx.unqualified(name) for name in tables)) or task_tables(found)
        missing = [name for name in names if name not in found]
        if missing:
            shaped = ", ".join(task_tables(found)) or "none"
            raise StoreError(f"{store.shown}: no table {', '.join(missing)} (task tables: {shaped})")
        if not names:
            raise StoreError(f"{store.shown}: no {TASK_TABLE_SHAPE}; name one with --table")
        unshaped = [name for name in names if name not in task_tables({name: found[name]})]
        if unshaped:
            raise StoreError(f"{store.shown}: {', '.join(unshaped)}: not an {TASK_TABLE_SHAPE}")
        return [_source(store, tx, name, found[name]) for name in names]


def _source(store: StoreURL, tx: _Snapshot, table: str, columns: list[str]) -> SourceFile:
    keys = row_key(columns)
    lines, quarantined = [], []
    for names, values in tx.rows(table, keys):
        why = undecodable(names, values)
        if why is not None:
            quarantined.append((len(lines), why))
        lines.append(store_row(names, values)[1] + b"\n")
    found = StoreTable(store.kind, table, keys, tuple(quarantined))
    return SourceFile(f"{store.shown}#{table}", b"".join(lines), store=found)


def row_key(columns: list[str]) -> tuple[str, ...]:
    """The columns naming a row: the JavaScript SDK's (tenant, owner, id), the Java SDK's task_id, else id."""
    if set(SCOPED_KEY) <= set(columns):
        return SCOPED_KEY
    return ("task_id",) if "task_id" in columns and "id" not in columns else ("id",)


DOUBLE_QUOTE = '"'


class _Snapshot:
    """One read-only transaction on a store: its tables' columns, and a table's rows in key order."""

    default_schema: str | None = None

    def unqualified(self, name: str) -> str:
        """A table's name as `tables` lists it: without the default schema."""
        return name.removeprefix(f"{self.default_schema}.") if self.default_schema else name

    quote = DOUBLE_QUOTE

    def tables(self) -> dict[str, list[str]]:
        raise NotImplementedError

    def cursor(self):
        """A context holding a cursor inside the snapshot's transaction."""
        raise NotImplementedError

    def qualified(self, table: str) -> str:
        """The table's name as a query writes it."""
        return _quoted(table, self.quote)

    def rows(self, table: str, keys: tuple[str, ...]) -> Iterator[tuple[list[str], tuple]]:
        """Each row of `table` in key order, with the column names, fetched in batches."""
        order = ", ".join(_quoted(key, self.quote) for key in keys)
        with self.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {self.qualified(table)} ORDER BY {order}")
            names = [d[0] for d in cursor.description]
            while batch := cursor.fetchmany(FETCH_ROWS):
                for values in batch:
                    yield names, values


@contextmanager
def _told(store: StoreURL) -> Iterator[None]:
    """Errors of the drivers as one `StoreError` line naming the store, the password never in it."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        if not _driver_error(exc):
            raise
        said = _CONNECTING.sub("", store.scrub(exc))
        raise StoreError(f"{store.shown}: cannot read the task store: {said}") from None


_CONNECTING = re.compile(r'Unable to connect to Postgres at "[^"]*": ')
"""What DuckDB's scanner says before libpq's own reason: the connection options, which tell nothing."""


def _driver_error(exc: Exception) -> bool:
    duckdb, pymysql = sys.modules.get("duckdb"), sys.modules.get("pymysql")
    return (
        isinstance(exc, OSError)
        or (duckdb is not None and isinstance(exc, duckdb.Error))
        or (pymysql is not None and isinstance(exc, pymysql.MySQLError))
    )


def _qualified(name: str, default_schema: str | None) -> tuple[str | None, str]:
    schema, dot, table = name.rpartition(".")
    return (schema if dot else default_schema), table


# PostgreSQL: DuckDB's postgres scanner ------------------------------------------------------------


class _DuckDBSnapshot(_Snapshot):
    def __init__(self, con, catalog: str, default_schema: str) -> None:
        self.con, self.catalog, self.default_schema = con, catalog, default_schema
        self.unchecked_text = self._on_server("SELECT current_setting('server_encoding')").fetchone() == ("SQL_ASCII",)
        """A SQL_ASCII database keeps whatever bytes it is given: its text is read as bytes and checked
        here, so that a row that is not UTF-8 is quarantined rather than failing its whole table."""

    def tables(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        rows = self.con.execute(
            "SELECT schema_name, table_name, column_name FROM duckdb_columns() WHERE database_name = ? "
            "ORDER BY schema_name, table_name, column_index",
            [self.catalog],
        ).fetchall()
        for schema, table, column in rows:
            name = table if schema == self.default_schema else f"{schema}.{table}"
            found.setdefault(name, []).append(column)
        return found

    def cursor(self):
        return nullcontext(self.con)  # the connection itself: a DuckDB cursor would be another transaction

    def qualified(self, table: str) -> str:
        schema, name = _qualified(table, self.default_schema)
        return ".".join(_quoted(part, DOUBLE_QUOTE) for part in (self.catalog, schema, name))

    def _on_server(self, query: str):
        """A query run by the server itself, in the snapshot's transaction."""
        from ..offline import literal

        return self.con.execute(f"SELECT * FROM postgres_query({literal(self.catalog)}, {literal(query)})")

    def rows(self, table: str, keys: tuple[str, ...]) -> Iterator[tuple[list[str], tuple]]:
        if not self.unchecked_text:
            yield from super().rows(table, keys)
            return
        schema, name = _qualified(table, self.default_schema)
        types = self.con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? "
            "AND table_name = ? ORDER BY column_index",
            [self.catalog, schema, name],
        ).fetchall()
        text = [kind in ("VARCHAR", "JSON") for _, kind in types]
        quoted = [_quoted(column, DOUBLE_QUOTE) for column, _ in types]
        cells = ", ".join(
            f"textsend({column}::text) AS {column}" if is_text else column
            for column, is_text in zip(quoted, text, strict=True)
        )
        order = ", ".join(_quoted(key, DOUBLE_QUOTE) for key in keys)
        where = ".".join(_quoted(part, DOUBLE_QUOTE) for part in (schema, name))
        query = f"SELECT {cells} FROM {where} ORDER BY {order}"
        cursor = self._on_server(query)
        names = [column for column, _ in types]
        while batch := cursor.fetchmany(FETCH_ROWS):
            for values in batch:
                yield (
                    names,
                    tuple(
                        text_cell(value) if is_text and value is not None else value
                        for value, is_text in zip(values, text, strict=True)
                    ),
                )


@contextmanager
def _postgresql(store: StoreURL) -> Iterator[_Snapshot]:
    import duckdb

    from ..offline import BackendError, config, install_extensions, literal

    with closing(duckdb.connect(config=config())) as con:
        try:
            install_extensions(con, [("postgres", "postgres_scanner")])
        except BackendError:
            raise StoreError(
                f"{store.shown}: reading a PostgreSQL task store needs DuckDB's postgres extension: {STORES_EXTRA}"
            ) from None
        con.execute("SET threads = 1")  # one connection to the server: one transaction, one snapshot
        con.execute("SET TimeZone = 'UTC'")
        port = str(store.port or DEFAULT_PORTS["postgresql"])
        settings = {"HOST": store.host, "PORT": port, "DATABASE": store.database}
        settings |= {"USER": store.user} if store.user else {}
        settings |= {"PASSWORD": store.password} if store.password else {}
        secret = ", ".join(f"{key} {literal(value)}" for key, value in settings.items())
        con.execute(f"CREATE TEMPORARY SECRET archiver_store (TYPE postgres, {secret})")
        options = " ".join(f"{key}={_libpq_value(value)}" for key, value in store.options)
        options += f" connect_timeout={CONNECT_SECONDS}" if "connect_timeout" not in dict(store.options) else ""
        con.execute(
            f"ATTACH {literal(options.strip())} AS archiver_store (TYPE postgres, SECRET archiver_store, READ_ONLY)"
        )
        con.execute("BEGIN TRANSACTION")
        try:
            yield _DuckDBSnapshot(con, "archiver_store", DEFAULT_SCHEMA["postgresql"])
        finally:
            con.execute("ROLLBACK")


def _libpq_value(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# MySQL and MariaDB: PyMySQL -------------------------------------------------------------------------


class _MySQLSnapshot(_Snapshot):
    """The tables of the URL's database (in MySQL a database is a schema: another one is another URL)."""

    def __init__(self, con) -> None:
        self.con = con

    def tables(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        with self.con.cursor() as cursor:
            cursor.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
                "ORDER BY table_name, ordinal_position"
            )
            for table, column in cursor.fetchall():
                found.setdefault(table, []).append(column)
        return found

    quote = "`"

    def cursor(self):
        return self.con.cursor()


@contextmanager
def _mysql(store: StoreURL) -> Iterator[_Snapshot]:
    try:
        import pymysql
    except ImportError:
        raise StoreError(f"{store.shown}: reading a MySQL task store needs PyMySQL: {STORES_EXTRA}") from None
    options = dict(store.options)
    con = pymysql.connect(
        host=store.host,
        port=store.port or DEFAULT_PORTS["mysql"],
        user=store.user or "",
        password=store.password or "",
        database=store.database,
        unix_socket=options.get("unix_socket"),
        charset="utf8mb4",
        connect_timeout=CONNECT_SECONDS,
    )
    with closing(con), con.cursor() as cursor:
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        try:
            yield _MySQLSnapshot(con)
        finally:
            con.rollback()


def _quoted(name: str, quote: str) -> str:
    return quote + name.replace(quote, quote * 2) + quote
