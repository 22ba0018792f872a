"""The Python API: everything the CLI does, an `Archive` does."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import duckdb

from .store import migrations
from .store.connection import DEFAULT_WAIT_SECONDS, archive_path, connect

STAT_QUERIES = {
    "sources": "SELECT count(DISTINCT path) FROM sources",
    "records": "SELECT count(*) FROM records WHERE kind <> 'filler'",
    "quarantined": "SELECT count(*) FROM records WHERE status = 'quarantined'",
    "tasks": "SELECT count(DISTINCT task_id) FROM results WHERE kind = 'task'",
    "results": "SELECT count(DISTINCT result_key) FROM results",
    "copies": "SELECT count(*) FROM results",
    "parts": "SELECT count(*) FROM parts",
    "citations": "SELECT count(*) FROM citations",
    "citations_inferred": "SELECT count(*) FROM citations WHERE inferred",
    "citations_invalid": "SELECT count(*) FROM citations WHERE NOT valid",
    "claims": "SELECT count(*) FROM claims",
    "agent_cards": "SELECT count(*) FROM agent_cards",
    "error_responses": "SELECT count(*) FROM rpc_errors",
}


class Archive:
    """An open archive: one DuckDB connection, the schema at the current version."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: str) -> None:
        self.con = con
        self.path = path

    @classmethod
    def open(cls, path: str | None = None, read_only: bool = False, wait: float = DEFAULT_WAIT_SECONDS,
             upgrade: bool = True) -> Archive:
        """Open (creating if need be) and bring the schema up to date, unless `upgrade` is False."""
        path = archive_path(path)
        if read_only:
            con = connect(path, read_only=True, wait=wait)
            if upgrade and migrations.pending(con):
                con.close()
                cls.open(path, wait=wait).close()
                con = connect(path, read_only=True, wait=wait)
            return cls(con, path)
        con = connect(path, wait=wait)
        if upgrade:
            migrations.upgrade(con)
        return cls(con, path)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ingest(self, paths: Iterable[str], on_file: Callable | None = None):
        from .ingest import ingest

        return ingest(self.con, paths, on_file)

    def stats(self) -> dict[str, int]:
        return {name: self.con.execute(sql).fetchone()[0] for name, sql in STAT_QUERIES.items()}

    def version(self) -> int:
        return migrations.current_version(self.con)

    def upgrade(self, upto: int | None = None) -> list:
        return migrations.upgrade(self.con, upto)

    def sources(self) -> list:
        """The recorded source-file versions as typed `Source` rows."""
        from .store.models import Source

        cursor = self.con.execute("SELECT * FROM sources ORDER BY path, ingested_at")
        names = [d[0] for d in cursor.description]
        return [Source(**dict(zip(names, row))) for row in cursor.fetchall()]
