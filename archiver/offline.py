"""Every DuckDB connection this program makes is offline: the settings it opens with and locks (`config`,
`lock`, `offline_connection`), and the extensions it installs from their Python wheels into a directory of
its own (`install_extensions`), never from the network. Below every layer that connects (the archive's
`store`, a task store's `read.stores`, verify's worker), so that each takes them from here."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import duckdb

from .errors import ArchiveError

LAKE_EXTRA = "pip install 'a2a-archiver[lake]'"


class BackendError(ArchiveError):
    """The archive's location cannot be used as given (a missing extension wheel, a data path)."""


ADJUSTABLE = (
    "memory_limit",
    "threads",
    "checkpoint_threshold",
    "enable_progress_bar",
    "temp_directory",
    "max_temp_directory_size",
)
"""Settings the archiver changes on an open connection (an ingest's writer settings, a quiet progress
bar, the bounds of `archiver sql`: `query.limits`); they stay adjustable when the configuration is locked,
and none of them reaches outside but for the folder DuckDB spills to, which `archiver sql` (which refuses
SET) chooses."""


def config(lake: bool = False) -> dict:
    """DuckDB settings for a connection: extensions never installed by DuckDB itself, and loaded by
    itself only while a lake is opened (`ducklake:` needs DuckLake before any statement can load it)."""
    return {
        "extension_directory": extension_directory(),
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": lake,
        "allowed_configs": list(ADJUSTABLE),
    }


def lock(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """No more extension loading by DuckDB itself, no progress bar (the archiver reports its own; DuckDB's
    would cut into output), and a configuration no statement can change but for `ADJUSTABLE`."""
    if locked(con):
        return con  # another connection of this process to the same archive locked it already
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET lock_configuration = true")
    return con


def locked(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT current_setting('lock_configuration')").fetchone()[0])


def offline_connection(time_zone: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection, offline and locked like the archive's (the verify worker reads data
    layer files with it: local CSV, Parquet and DuckDB files need no extension); `time_zone` fixes the
    zone of its timestamps with time zone (default: the machine's)."""
    con = duckdb.connect(config=config())
    if time_zone:
        try:
            con.execute("SET TimeZone = ?", [time_zone])  # before the lock, which allows no more settings
        except duckdb.Error:
            con.close()
            raise
    return lock(con)


def extension_directory() -> str:
    """$ARCHIVER_EXTENSION_DIR, else a folder in the user's cache (never DuckDB's shared ~/.duckdb)."""
    return os.environ.get("ARCHIVER_EXTENSION_DIR") or os.path.join(cache_directory(), "duckdb-extensions")


def cache_directory() -> str:
    """The archiver's folder in the user's cache ($XDG_CACHE_HOME, else ~/.cache)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "archiver")


def wheel_extension(package: str) -> Path:
    """The `.duckdb_extension` file inside an installed `duckdb-extension-<package>` wheel."""
    spec = importlib.util.find_spec(f"duckdb_extension_{package}")
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"a DuckLake archive needs DuckDB's {package} extension: {LAKE_EXTRA}")
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(root.glob(f"extensions/v{duckdb.__version__}/*.duckdb_extension"))
    if not found:
        have = ", ".join(sorted(p.parent.name for p in root.glob("extensions/*/*.duckdb_extension"))) or "none"
        raise BackendError(
            f"duckdb-extension-{package} has no build for duckdb {duckdb.__version__} "
            f"(it has: {have}); {LAKE_EXTRA} installs the matching wheels"
        )
    return found[0]


def install_extensions(con: duckdb.DuckDBPyConnection, needed: list[tuple[str, str]]) -> None:
    """INSTALL each needed extension from its wheel into the extension directory (once), then LOAD it."""
    directory = extension_directory()
    os.makedirs(directory, exist_ok=True)
    con.execute(f"SET extension_directory = {literal(directory)}")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    installed = dict(
        con.execute("SELECT extension_name, installed_from FROM duckdb_extensions() WHERE installed").fetchall()
    )
    for package, name in needed:
        source = str(wheel_extension(package))
        if installed.get(name) != source:
            con.execute(f"INSTALL {literal(source)}")
        con.execute(f"LOAD {name}")


def literal(text: str) -> str:
    """A SQL string literal (ATTACH, INSTALL and SET take no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"
