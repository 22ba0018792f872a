"""Where the archive lives: one DuckDB file, or a DuckLake (catalog in PostgreSQL, SQLite or a DuckDB
file; data as Parquet under a data path). Chosen here, and only here, from `--db` / `$ARCHIVER_DB`.

A lake is opened as DuckDB's own database path `ducklake:...`, so the lake is the connection's default
catalog: every query, view, cursor and migration runs on it unchanged. DuckLake and the scanners of
its catalog load offline from the `duckdb-extension-*` wheels (`pip install 'a2a-archiver[lake]'`), which
are installed into a user-local extension directory.

Every connection is offline: DuckDB never installs an extension by itself, loads one by itself only while
a lake is being opened (from that directory), and once open its configuration is locked but for the few
settings the archiver itself adjusts, so no statement can turn either back on. Nothing reaches the network.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import UsageError
from ..offline import BackendError, config, extension_directory, install_extensions, literal, lock, locked
from ..redact import redacted
from . import objectstore

DEFAULT_DB = "archive.duckdb"
LAKE_PREFIX = "ducklake:"
_SCANNERS = {"postgres": ("postgres", "postgres_scanner"), "sqlite": ("sqlite", "sqlite_scanner")}


class LocationError(BackendError, UsageError):
    """`--db` is not a location at all (a lake without a catalog, an unknown catalog kind): a usage error."""


CATALOGS = ("postgres", "sqlite", "duckdb")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Location:
    """A parsed `--db`: `catalog` is "file" (a plain DuckDB archive), or the kind of a lake's catalog
    database: "postgres", "sqlite" or "duckdb"; `catalog_path` is its path or libpq connection string."""

    url: str
    catalog: str
    catalog_path: str
    data_path: str | None = None
    """Where a new lake puts its Parquet files (default for a file catalog: beside it, `<catalog>.files/`)."""

    @property
    def is_lake(self) -> bool:
        return self.catalog != "file"

    def describe(self) -> str:
        """The location as messages and start lines show it: a catalog's password masked."""
        if not self.is_lake:
            return self.url
        return f"DuckLake ({self.catalog} catalog {redacted(self.catalog_path)})"

    @property
    def shown(self) -> str:
        """`url` as messages show it: a catalog's password masked."""
        return redacted(self.url)


def locate(db: str | None = None, data_path: str | None = None) -> Location:
    """`--db` (else $ARCHIVER_DB, else ./archive.duckdb) and `--data-path` (else $ARCHIVER_DATA_PATH)."""
    db = db or os.environ.get("ARCHIVER_DB") or DEFAULT_DB
    data_path = data_path or os.environ.get("ARCHIVER_DATA_PATH") or None
    if db[: len(LAKE_PREFIX)].lower() != LAKE_PREFIX:
        return Location(db, "file", db)
    catalog, catalog_path = _catalog(db, db[len(LAKE_PREFIX) :])
    url = LAKE_PREFIX + ("" if catalog == "duckdb" else catalog + ":") + catalog_path
    if objectstore.is_url(data_path):
        data_path = objectstore.data_path_url(data_path)
    elif data_path:
        data_path = _absolute(data_path).rstrip(os.sep) + os.sep
    elif not data_path and catalog != "postgres":
        data_path = catalog_path + ".files" + os.sep
    return Location(url, catalog, catalog_path, data_path)


def _catalog(db: str, rest: str) -> tuple[str, str]:
    """The catalog's kind and path or connection string in what follows `ducklake:`. A prefix like a
    scheme names the kind (`postgres:`, `sqlite:`, `duckdb:`); an unknown one is refused rather than taken
    as a file name (`ducklake:mysql:x` made a catalog file named `mysql:x`), and so is a blank catalog."""
    scheme = _SCHEME.match(rest)
    catalog = scheme.group()[:-1].lower() if scheme else "duckdb"
    if catalog not in CATALOGS:
        raise LocationError(
            f"{db}: no catalog of kind {catalog!r} (ducklake:postgres:..., ducklake:sqlite:PATH or "
            f"ducklake:PATH; a file whose name holds a colon: ducklake:duckdb:PATH)"
        )
    path = rest[scheme.end() :] if scheme else rest
    if not path.strip():
        raise LocationError(f"{db}: name the catalog after 'ducklake:' (see `archiver --help`)")
    return catalog, path if catalog == "postgres" else _absolute(path)


def _absolute(path: str) -> str:
    """Absolute, so that writers started in other folders find the same files."""
    return os.path.abspath(os.path.expanduser(path)) if path else path


def exists(location: Location) -> bool | None:
    """Whether the archive is there already (None: cannot tell without connecting, as for PostgreSQL)."""
    if location.catalog == "postgres":
        return None
    path = Path(location.catalog_path)
    return path.exists() and (not location.is_lake or path.stat().st_size > 0)


def extensions(location: Location) -> list[tuple[str, str]]:
    """(wheel package, name DuckDB loads it by) of what `location` needs."""
    needed = [("ducklake", "ducklake")] if location.is_lake else []
    if location.catalog in _SCANNERS:
        needed.append(_SCANNERS[location.catalog])
    return needed


def installed(location: Location) -> bool:
    """Whether the extensions `location` needs are in the extension directory already."""
    root = Path(extension_directory(), f"v{duckdb.__version__}")
    return all(any(root.glob(f"*/{name}.duckdb_extension")) for _package, name in extensions(location))


def install(location: Location) -> None:
    with duckdb.connect(config=config()) as con:
        install_extensions(con, extensions(location))


def create_lake(location: Location) -> None:
    """A lake is created by ATTACH with its DATA_PATH; afterwards its catalog remembers the data path."""
    if not location.data_path:
        raise BackendError(
            f"{location.describe()}: a new lake with a PostgreSQL catalog needs --data-path "
            "(a folder or object-store URL for its Parquet files)"
        )
    with duckdb.connect() as con:
        install_extensions(con, extensions(location))
        if objectstore.is_url(location.data_path):
            objectstore.reach(con, location.data_path)
        con.execute(f"ATTACH {literal(location.url)} AS new_lake (DATA_PATH {literal(location.data_path)})")


def open_database(location: Location, read_only: bool) -> duckdb.DuckDBPyConnection:
    """One DuckDB connection whose default catalog is the archive (the file, or the lake).

    A process that holds the archive open already gets a connection to the same DuckDB instance
    (DuckDB shares one per path), whose configuration is locked as it should be: it is asked to set
    nothing then."""
    settings = {**config(location.is_lake), **({"temp_directory": spill_folder()} if location.is_lake else {})}
    try:
        con = _connect(location, read_only, settings)
    except duckdb.InvalidInputException as exc:
        if "configuration has been locked" not in str(exc):
            raise
        con = duckdb.connect(location.url, read_only=read_only, config={**settings, "autoload_known_extensions": False})
    if location.is_lake and not locked(con):
        try:
            reach_data(con)
        except BaseException:
            con.close()
            raise
    return lock(con)


def _connect(location: Location, read_only: bool, settings: dict) -> duckdb.DuckDBPyConnection:
    """Connect; a lake whose data path is in an object store needs httpfs as it opens: DuckDB loads it from
    the extension directory, where it is put from its wheel the first time (as `install` does the others)."""
    try:
        return duckdb.connect(location.url, read_only=read_only, config=settings)
    except duckdb.Error as exc:
        if not location.is_lake or "httpfs" not in str(exc):
            raise
    with duckdb.connect(config=config()) as con:
        install_extensions(con, [objectstore.HTTPFS])
    return duckdb.connect(location.url, read_only=read_only, config=settings)


def spill_folder() -> str:
    """Where DuckDB spills what does not fit in memory, for a lake: a folder of this process under the
    system's temporary folder (DuckDB's default, `<database path>.tmp`, made `./ducklake:…tmp` in the
    working directory); DuckDB makes it when it first spills and removes it when the process closes it."""
    return os.path.join(tempfile.gettempdir(), f"archiver-spill-{os.getpid()}")


def reach_data(con: duckdb.DuckDBPyConnection, data_path: str | None = None) -> None:
    """Make a lake's data path (by default the open lake's, as its catalog says) reachable from `con`, when
    it is in an object store."""
    data_path = data_path or lake_data_path(con)
    if objectstore.is_url(data_path):
        objectstore.reach(con, data_path)


def lake_data_path(con: duckdb.DuckDBPyConnection) -> str:
    return con.execute("SELECT data_path FROM ducklake_settings(current_database())").fetchone()[0]


LEASES_SUFFIX = ".leases"
"""A SQLite catalog's leases live in the SQLite file `<catalog>.leases` beside it."""

SIDE_FILES = ("", ".wal", ".tmp", "-wal", "-shm", "-journal")
"""What DuckDB (`.wal`, `.tmp`) and SQLite (`-wal`, `-shm`, `-journal`) keep beside a database file."""


@dataclass(frozen=True)
class ArchiveFiles:
    """The files the open archive is made of, wherever they sit: ingest never reads them as input, or an
    archive inside the folder it ingests would store itself and grow on every run."""

    names: frozenset[str]
    """Absolute paths, as given and resolved, of its database files and the files beside them."""
    inodes: frozenset[tuple[int, int]]
    """(device, inode) of those that exist: a hard link or a symlink to one is the same file."""
    folders: tuple[str, ...]
    """Its folders (a lake's data path, DuckDB's spill folder) that exist, as given and resolved, ending in "/"."""

    def holds(self, path: str) -> bool:
        """Whether the absolute `path` reaches one of the archive's files, by any link."""
        if path in self.names or path.startswith(self.folders):
            return True
        try:
            status = os.stat(path)
        except OSError:
            return False
        if (status.st_dev, status.st_ino) in self.inodes:
            return True
        if not self.folders:
            return False
        real = os.path.realpath(path)
        return real in self.names or real.startswith(self.folders)


def archive_files(con: duckdb.DuckDBPyConnection) -> ArchiveFiles:
    """The archive's own files, as the open connection names them: its database or catalog file and
    what sits beside it (`.wal`, `.leases`, ...), its spill folder and a lake's local data path."""
    path, kind = con.execute(
        "SELECT path, type FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    databases, folders = [], [con.execute("SELECT current_setting('temp_directory')").fetchone()[0]]
    if kind == "ducklake":
        catalog = path.removeprefix("sqlite:").removeprefix("duckdb:")
        databases += [] if catalog.startswith("postgres:") else [catalog, catalog + LEASES_SUFFIX]
        folders.append(con.execute("SELECT data_path FROM ducklake_settings(current_database())").fetchone()[0])
    elif path:
        databases.append(path)
    names = {os.path.abspath(database + side) for database in databases for side in SIDE_FILES}
    names |= {os.path.realpath(name) for name in names}
    local = [os.path.abspath(folder) for folder in folders if folder and "://" not in folder]
    existing = {found for folder in local for found in (folder, os.path.realpath(folder)) if os.path.isdir(found)}
    return ArchiveFiles(
        frozenset(names),
        frozenset(_inodes(names)),
        tuple(sorted(folder.rstrip(os.sep) + os.sep for folder in existing)),
    )


def _inodes(paths: set[str]) -> set[tuple[int, int]]:
    found = set()
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            continue
        found.add((status.st_dev, status.st_ino))
    return found
