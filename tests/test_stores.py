"""Live task stores: real PostgreSQL and MariaDB servers, filled by the A2A SDKs, ingested in read-only
snapshots, and a second run that stores only the rows that changed.

The Python SDK's rows are written by a2a-sdk 1.3.0's own `DatabaseTaskStore`; the JavaScript SDK's table is
made with the DDL its `a2a-db` tool renders (`tests/stores/a2a-js-tasks.*.sql`) and holds rows its own
`DatabaseTaskStore.save` produced (`tests/stores/a2a-js-rows.json`; see `tests/stores/README.md`).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.read import stores
from tests import servers
from tests.transcripts import v1_cited_parts, v1_task

HERE = Path(__file__).resolve().parent / "stores"
PASSWORD = "pa ss:w@rd/1"
"""The read-only user's password: characters a URL must quote, and never to be seen in any output."""
PASSWORD_SQL = "'" + PASSWORD.replace(":", "\\:") + "'"
"""The password as an SQL literal in an SQLAlchemy `text()` (where a colon starts a bound parameter)."""
JS_ROWS = json.loads((HERE / "a2a-js-rows.json").read_text())


def _python_tasks(phase: str) -> list[dict]:
    """Tasks saved through the Python SDK: two, then one changed and one new."""
    if phase == "first":
        return [
            v1_task("task-py-1", v1_cited_parts()),
            v1_task("task-py-2", v1_cited_parts({"share": 0.2, "n": 300}), state="TASK_STATE_WORKING"),
        ]
    changed = v1_task("task-py-2", v1_cited_parts({"share": 0.25, "n": 300}))
    changed["status"]["timestamp"] = "2026-04-20T11:00:00Z"
    return [changed, v1_task("task-py-3", v1_cited_parts({"share": 0.5, "n": 80}))]


def _js_ddl(dialect: str) -> list[str]:
    """The statements `a2a-db upgrade --sql` rendered. MariaDB (Debian 12's 10.11) lacks MySQL 8's
    utf8mb4_0900_bin collation; its utf8mb4_bin compares the same way (binary)."""
    text = (HERE / f"a2a-js-tasks.{dialect}.sql").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    statements = [s.strip() for s in "\n".join(lines).split(";\n") if s.strip()]
    return [s.rstrip(";").replace("utf8mb4_0900_bin", "utf8mb4_bin") for s in statements]


class LiveStore:
    """A database on a throwaway server: filled as its superuser, read by the archiver as `reader`."""

    def __init__(self, kind: str, server: servers.Server, database: str) -> None:
        self.kind, self.server, self.database = kind, server, database
        driver = "postgresql+asyncpg://postgres" if kind == "postgresql" else "mysql+aiomysql://root"
        self.admin_url = f"{driver}@127.0.0.1:{server.port}/{database}"
        self.url = f"{kind}://reader:{quote(PASSWORD, safe='')}@127.0.0.1:{server.port}/{database}"
        self.shown = f"{kind}://reader@127.0.0.1:{server.port}/{database}"

    def run(self, *statements: str, params: list[dict] | None = None) -> list[tuple]:
        return asyncio.run(self._run(statements, params))

    async def _run(self, statements, params) -> list[tuple]:
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self.admin_url)
        try:
            async with engine.begin() as con:
                rows = []
                for statement in statements:
                    result = (
                        await con.execute(text(statement), params) if params else await con.execute(text(statement))
                    )
                    rows = list(result.fetchall()) if result.returns_rows else []
                return rows
        finally:
            await engine.dispose()

    def save_python(self, tasks: list[dict]) -> None:
        asyncio.run(self._save_python(tasks))

    async def _save_python(self, tasks: list[dict]) -> None:
        from a2a.server.context import ServerCallContext
        from a2a.server.tasks import DatabaseTaskStore
        from a2a.types.a2a_pb2 import Task
        from google.protobuf.json_format import ParseDict
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self.admin_url)
        try:
            store = DatabaseTaskStore(engine)  # its default table, `tasks`
            await store.initialize()
            for task in tasks:
                await store.save(ParseDict(task, Task()), ServerCallContext())
        finally:
            await engine.dispose()

    def save_js(self, rows: list[dict]) -> None:
        """The JS store's upsert, done as delete and insert of the rows it wrote."""
        columns = list(rows[0])
        quote_char = '"' if self.kind == "postgresql" else "`"
        names = ", ".join(f"{quote_char}{c}{quote_char}" for c in columns)
        self.run(
            "DELETE FROM acme_tasks WHERE tenant = :tenant AND owner = :owner AND id = :id",
            f"INSERT INTO acme_tasks ({names}) VALUES ({', '.join(':' + c for c in columns)})",
            params=rows,
        )

    def fill(self, phase: str) -> None:
        self.save_python(_python_tasks(phase))
        self.save_js(JS_ROWS[phase])

    def content(self) -> list[tuple]:
        """Every row of both tables, and in PostgreSQL the transaction that wrote it (xmin): equal before
        and after an ingest when the ingest wrote nothing."""
        version = ", xmin::text" if self.kind == "postgresql" else ""
        return self.run(f"SELECT *{version} FROM tasks ORDER BY id") + self.run(
            f"SELECT *{version} FROM acme_tasks ORDER BY id"
        )

    def statements_of_reader(self) -> list[str]:
        """What the server's log says the `reader` user ran."""
        text = self.server.log.read_text(errors="replace")
        if self.kind == "postgresql":
            return re.findall(r"^\[reader\] LOG:  statement: (.*)$", text, re.MULTILINE)
        threads = set(re.findall(r"^\S*\s*\S*\s+(\d+) Connect\treader@", text, re.MULTILINE))
        found = re.findall(r"^\S*\s*\S*\s+(\d+) (?:Query|Execute)\t(.*)$", text, re.MULTILINE)
        return [statement for thread, statement in found if thread in threads]


@pytest.fixture(scope="session")
def postgresql_server():
    servers.skip_without("postgres")
    pytest.importorskip("duckdb_extension_postgres", reason="the stores extra is not installed")
    hba = ("host all reader 127.0.0.1/32 scram-sha-256",)
    with servers.postgres(hba=hba, settings=("log_statement=all", "log_line_prefix='[%u] '")) as server:
        yield server


@pytest.fixture(scope="session")
def mysql_server():
    servers.skip_without("mariadb")
    pytest.importorskip("pymysql", reason="the stores extra is not installed")
    with servers.mariadb() as server:
        yield server


_made: list[str] = []


@pytest.fixture(params=["postgresql", "mysql"])
def live_store(request) -> LiveStore:
    """A new database with the Python SDK's table `tasks` and the JS SDK's `acme_tasks`, empty,
    and the user `reader`, who may only read it."""
    pytest.importorskip("a2a.server.tasks", reason="the test extra's a2a-sdk is not installed")
    kind = request.param
    server = request.getfixturevalue(f"{kind}_server")
    database = f"store{len(_made)}"
    _made.append(database)
    if kind == "postgresql":
        server.createdb(database)
    store = LiveStore(kind, server, database)
    if kind == "mysql":
        store.admin_url = store.admin_url.rsplit("/", 1)[0] + "/mysql"
        store.run(
            f"CREATE DATABASE {database}",
            f"CREATE USER IF NOT EXISTS 'reader'@'%' IDENTIFIED BY {PASSWORD_SQL}",
            f"CREATE USER IF NOT EXISTS 'reader'@'localhost' IDENTIFIED BY {PASSWORD_SQL}",
            f"GRANT SELECT ON {database}.* TO 'reader'@'%'",
            f"GRANT SELECT ON {database}.* TO 'reader'@'localhost'",
        )
        store.admin_url = store.admin_url.rsplit("/", 1)[0] + f"/{database}"
    store.save_python([])
    store.run(*_js_ddl("postgres" if kind == "postgresql" else "mysql"))
    if kind == "postgresql":
        store.run(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN "
            f"CREATE ROLE reader LOGIN PASSWORD {PASSWORD_SQL}; END IF; END $$",
            "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
        )
    return store


def ingest(db: Path, *args: str, code: int = 0) -> dict:
    result = CliRunner().invoke(main, ["ingest", "--db", str(db), "--json", *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    assert PASSWORD not in result.output
    assert quote(PASSWORD, safe="") not in result.output
    return orjson.loads(result.stdout)


def _counts(summary: dict) -> tuple:
    keys = ("files", "files_unchanged", "records", "duplicates_skipped", "quarantined", "tasks", "citations", "claims")
    return tuple(summary[key] for key in keys)


def _archived(db: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    with Archive.open(str(db), read_only=True) as archive:
        con = archive.con
        sources = con.execute("SELECT path, records, container FROM sources ORDER BY path, ingested_at").fetchall()
        records = con.execute("SELECT locator, source_sha256 FROM records ORDER BY ingested_at, locator").fetchall()
        results = con.execute("SELECT task_id, state FROM results ORDER BY task_id").fetchall()
    return sources, records, results


@pytest.mark.slow
@pytest.mark.store
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # the SDK declares its table model again per store
def test_a_live_store_is_read_in_snapshots_and_a_later_run_stores_only_changed_rows(live_store, tmp_path):
    store, db = live_store, tmp_path / "archive.duckdb"
    store.fill("first")
    before = store.content()
    first = ingest(db, store.url)
    assert store.content() == before
    # files, unchanged, records, duplicates skipped, quarantined, tasks, citations, claims
    assert _counts(first) == (2, 0, 4, 0, 0, 4, 4, 8)
    sources, records, results = _archived(db)
    assert sources == [(f"{store.shown}#acme_tasks", 2, store.kind), (f"{store.shown}#tasks", 2, store.kind)]
    assert len(records) == 4
    first_records = records
    assert results == [
        ("task-js-1", "completed"),
        ("task-js-2", "working"),
        ("task-py-1", "completed"),
        ("task-py-2", "working"),
    ]

    store.fill("second")  # task-py-2 and task-js-2 change, task-py-3 and task-js-3 are new
    second = ingest(db, store.url)
    assert _counts(second) == (2, 0, 6, 2, 0, 6, 6, 12)
    sources, records, results = _archived(db)
    assert sources == [
        (f"{store.shown}#acme_tasks", 2, store.kind),
        (f"{store.shown}#acme_tasks", 3, store.kind),
        (f"{store.shown}#tasks", 2, store.kind),
        (f"{store.shown}#tasks", 3, store.kind),
    ]
    assert records[:4] == first_records  # the first run's records stay as they were
    new = {locator for locator, _sha in records[4:]}
    assert new == {
        "acme_tasks tenant= owner=unknown id=task-js-2",
        "acme_tasks tenant= owner=unknown id=task-js-3",
        "tasks id=task-py-2",
        "tasks id=task-py-3",
    }
    assert len(records) == 8
    assert results == [
        ("task-js-1", "completed"),
        ("task-js-2", "completed"),
        ("task-js-3", "completed"),
        ("task-py-1", "completed"),
        ("task-py-2", "completed"),
        ("task-py-3", "completed"),
    ]

    third = ingest(db, store.url)
    assert _counts(third) == (2, 2, 6, 6, 0, 6, 6, 12)
    assert _archived(db) == (sources, records, results)
    check = CliRunner().invoke(main, ["db", "check", "--db", str(db)])
    assert check.exit_code == 0, check.output
    assert PASSWORD.encode() not in db.read_bytes()
    for source, claims in [(store.url + "#tasks", 6), (store.shown + "#*", 12), (store.shown + "#nope", 0)]:
        query = CliRunner().invoke(main, ["query", "claims", "--db", str(db), "--source", source, "--format", "jsonl"])
        assert query.exit_code == 0, query.output
        assert len(query.stdout.splitlines()) == claims

    only = ingest(tmp_path / "other.duckdb", store.url, "--table", "acme_tasks")
    assert _counts(only) == (1, 0, 3, 0, 0, 3, 3, 6)
    _read_only_statements(store)


def _read_only_statements(store: LiveStore) -> None:
    """Every statement the archiver sent: reads in one read-only snapshot per run, nothing that writes,
    locks or changes the server."""
    statements = [s for s in store.statements_of_reader() if s.strip()]  # postgres_query sends an empty one
    verbs = {statement.split()[0].upper() for statement in statements}
    if store.kind == "postgresql":
        begins = [s for s in statements if s.upper().startswith("BEGIN")]
        assert begins, statements
        assert all("REPEATABLE READ READ ONLY" in s.upper() for s in begins)
        assert verbs <= {"BEGIN", "SELECT", "COPY", "ROLLBACK", "COMMIT", "DISCARD"}, verbs
    else:
        starts = statements.count("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        assert starts >= 4
        assert statements.count("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ") == starts
        assert verbs <= {"SET", "START", "SELECT", "ROLLBACK"}, verbs
    assert not [s for s in statements if re.search(r"\bFOR (UPDATE|SHARE)\b|\bLOCK\b", s, re.IGNORECASE)]


@pytest.mark.slow
@pytest.mark.store
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_what_cannot_be_read_is_one_line_naming_the_store_without_its_password(live_store, tmp_path):
    store, db = live_store, tmp_path / "archive.duckdb"
    wrong = store.url.replace(quote(PASSWORD, safe=""), quote("not-" + PASSWORD, safe=""))
    closed = store.url.replace(f":{store.server.port}/", f":{servers.free_port()}/")
    for url, args, said in [
        (wrong, (), "cannot read the task store"),
        (closed, (), "cannot read the task store"),
        (store.url, ("--table", "nope"), "no table nope (task tables: tasks, acme_tasks)"),
        (store.url, ("--table", "a2a_acme_tasks_migrations"), "a2a_acme_tasks_migrations: not an A2A task-store"),
    ]:
        result = CliRunner().invoke(main, ["ingest", "--db", str(db), url, *args])
        assert result.exit_code == 1, result.output
        line = result.output.strip()
        assert line.count("\n") == 0, line
        assert line.startswith(f"Error: {stores.shown(url)}: "), line
        assert said in line
        assert "pa ss" not in line
        assert quote(PASSWORD, safe="") not in line
    assert not db.exists()


def test_store_urls_are_shown_without_password_or_query():
    url = "postgresql://ana:s3cr%40t@db.example:6543/tasks?sslmode=require&password=other"
    parsed = stores.parse(url)
    assert parsed.shown == "postgresql://ana@db.example:6543/tasks"
    assert (parsed.user, parsed.password, parsed.options) == ("ana", "s3cr@t", (("sslmode", "require"),))
    assert stores.shown("mariadb://u:p@h/db") == "mysql://u@h/db"
    assert stores.shown("postgresql+asyncpg://u:p@h/db") == "postgresql://u@h/db"
    assert stores.shown("mysql://u:p@[::1]:3306/db") == "mysql://u@[::1]:3306/db"
    assert stores.shown("mysql://u:p@h/db?x=1#acme_tasks") == "mysql://u@h/db#acme_tasks"
    assert stores.shown("some/file.jsonl") == "some/file.jsonl"
    assert parsed.scrub("FATAL:  password s3cr@t\nrefused") == "FATAL: password *** refused"
    for bad in ("postgresql://u:p@h:99999/db", "mysql://u:p@h/", "postgresql://u:p@h/a/b"):
        with pytest.raises(stores.StoreError) as caught:
            stores.parse(bad)
        assert ":p@" not in str(caught.value)
        assert "not a task-store URL" in str(caught.value)


@pytest.mark.slow
def test_a_store_url_without_the_stores_extra_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pymysql", None)  # import pymysql now fails
    result = CliRunner().invoke(main, ["ingest", "--db", str(tmp_path / "a.duckdb"), "mysql://u:secret@127.0.0.1/db"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: mysql://u@127.0.0.1/db: reading a MySQL task store needs PyMySQL: pip install 'a2a-archiver[stores]'\n"
    )


@pytest.mark.slow
def test_tables_without_a_store_url_are_a_usage_error(tmp_path, write):
    path = write("one.jsonl", [{"jsonrpc": "2.0", "id": 1, "result": v1_task("t1", v1_cited_parts())}])
    result = CliRunner().invoke(main, ["ingest", "--db", str(tmp_path / "a.duckdb"), path, "--table", "tasks"])
    assert result.exit_code == 2
    assert result.output.endswith(
        "Error: Invalid value for '--table': names tables of a task store, and no postgresql:// or mysql:// URL "
        "was given\n"
    )


SAMPLE_STORE = Path(__file__).resolve().parent.parent / "sample_transcripts" / "kestrel-mobility" / "task-store.sqlite"


def _sample_task_rows() -> tuple[list[str], list[tuple]]:
    """The JavaScript SDK's task rows of the samples' SQLite store: column names and rows."""
    import sqlite3

    con = sqlite3.connect(f"file:{SAMPLE_STORE}?mode=ro", uri=True)
    try:
        cursor = con.execute("SELECT * FROM tasks ORDER BY id")
        return [d[0] for d in cursor.description], cursor.fetchall()
    finally:
        con.close()


@pytest.mark.slow
@pytest.mark.store
def test_a_row_not_in_utf8_in_a_sql_ascii_store_is_quarantined_with_its_key_and_the_rest_kept(
    postgresql_server, tmp_path
):
    """Issue 26: one row holding a byte that is not UTF-8, in a SQL_ASCII database (which stores any bytes),
    aborted every table of the store ("Invalid unicode (byte sequence mismatch)"), naming no table or row."""
    import subprocess

    server = postgresql_server
    psql = [*server.as_user, str(server.bindir / "psql"), "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres"]
    psql += ["-v", "ON_ERROR_STOP=1", "-q"]
    create = "CREATE DATABASE sqlascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
    subprocess.run([*psql, "-c", create], check=True, capture_output=True)
    names, rows = _sample_task_rows()
    columns = ", ".join(f'"{name}" {"bigint" if name == "status_last_updated" else "text"}' for name in names)
    key = "PRIMARY KEY (tenant, owner, id)"
    script = [f"CREATE TABLE {table} ({columns}, {key});" for table in ("tasks", "more_tasks")]
    for table, row in [("tasks", row) for row in rows] + [("more_tasks", rows[0])]:
        values = ", ".join("NULL" if value is None else "'" + str(value).replace("'", "''") + "'" for value in row)
        script.append(f"INSERT INTO {table} VALUES ({values});")
    bad_id = rows[1][names.index("id")]
    not_utf8 = 'E\'"na\\xffme": 1, "parts"\''  # a name holding the byte 0xff
    script.append(f"UPDATE tasks SET artifacts = replace(artifacts, '\"parts\"', {not_utf8}) WHERE id = '{bad_id}';")
    subprocess.run([*psql, "-d", "sqlascii"], input="\n".join(script).encode(), check=True, capture_output=True)

    url = f"postgresql://postgres@127.0.0.1:{server.port}/sqlascii"
    db = tmp_path / "a.duckdb"
    summary = ingest(db, url, code=1)
    assert (summary["files"], summary["records"], summary["quarantined"]) == (2, len(rows) + 1, 1)
    with Archive.open(str(db), read_only=True) as archive:
        quarantined = archive.con.execute(
            "SELECT source_path, locator, reason FROM records WHERE status = 'quarantined'"
        ).fetchall()
        results = archive.con.execute("SELECT count(DISTINCT task_id) FROM results").fetchone()[0]
    assert quarantined == [
        (
            f"postgresql://postgres@127.0.0.1:{server.port}/sqlascii#tasks",
            f"tasks tenant= owner=unknown id={bad_id}",
            "column 'artifacts' is not UTF-8 text (byte 0xff at "
            + str(rows[1][names.index("artifacts")].index('"parts"') + 3)
            + "); the row is stored with each such byte as a \\xNN escape",
        )
    ]
    assert results >= 1
