"""The data layer file: the tables agents cite and the functions that re-derive their numbers.

A TOML file (see the README, "The data layer file") names tables, each backed by a CSV or Parquet file or a table in
a DuckDB database, optionally for one study and one period (a wave's snapshot), and extractors,
each a function in a module the file names (a path beside it or a dotted module) or found in the
`archiver.extractors` entry-point group. A citation's `source.table` and `source.function` are
only ever looked up here: nothing named inside a transcript is imported or run.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..errors import VerifyError

ENTRY_POINT_GROUP = "archiver.extractors"
DEFAULT_TOLERANCE = 1e-9
DEFAULT_TIMEOUT = 60.0
BESIDE_ARCHIVE = "archiver-data-layer.toml"
TABLE_FORMATS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class DataLayerError(VerifyError):
    """The data layer file is missing, unreadable or malformed."""


@dataclass(frozen=True)
class TableSource:
    """A named table, as a file (CSV, Parquet) or a table inside a DuckDB database file."""

    name: str
    format: str  # csv | parquet | duckdb
    paths: tuple[str, ...]
    table: str | None = None  # the table inside a DuckDB database
    study: str | None = None
    period: str | None = None

    def describe(self) -> str:
        where = ", ".join(self.paths) + (f" table {self.table}" if self.table else "")
        return f"{self.name} ({self.format}: {where})"

    def spec(self) -> dict:
        """What a worker process needs to open it."""
        return {"format": self.format, "paths": list(self.paths), "table": self.table}


@dataclass(frozen=True)
class Extractor:
    """A declared re-run function: `kind` file (a module file), module (dotted) or entry_point."""

    name: str
    kind: str
    target: str
    function: str
    version: str | None = None

    def label(self) -> str:
        return f"{self.target}:{self.function}" if self.kind != "entry_point" else f"entry point {self.target}"

    def spec(self) -> dict:
        return {"kind": self.kind, "target": self.target, "function": self.function}


@dataclass(frozen=True)
class Resolution:
    """What a citation's source triple means in this data layer, before anything runs."""

    table: TableSource | None
    extractor: Extractor | None
    problem: str | None
    table_sha256: str | None
    extractor_version: str | None
    fingerprint: str


@dataclass
class DataLayer:
    path: str
    tables: list[TableSource]
    extractors: dict[str, Extractor]
    studies: frozenset[str] | None  # None: every study
    tolerance: float = DEFAULT_TOLERANCE
    timeout: float = DEFAULT_TIMEOUT
    entry_points: bool = True
    _hashes: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: str | os.PathLike) -> DataLayer:
        path = os.path.abspath(path)
        try:
            with open(path, "rb") as handle:
                doc = tomllib.load(handle)
        except FileNotFoundError:
            raise DataLayerError(f"{path}: no data layer file here") from None
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise DataLayerError(f"{path}: {exc}") from None
        base = os.path.dirname(path)
        settings = _table(doc.get("verify", {}), "[verify]")
        tables = [
            _table_source(entry, base, index) for index, entry in enumerate(_list(doc.get("tables", []), "[[tables]]"))
        ]
        extractors = {
            name: _extractor(name, value, base)
            for name, value in _table(doc.get("extractors", {}), "[extractors]").items()
        }
        studies = doc.get("studies")
        if studies is not None:
            studies = frozenset(_strings(studies, "studies"))
        elif tables and all(t.study for t in tables):
            studies = frozenset(t.study for t in tables)
        return cls(
            path,
            tables,
            extractors,
            studies,
            tolerance=_number(settings.get("tolerance", DEFAULT_TOLERANCE), "[verify] tolerance"),
            timeout=_number(settings.get("timeout", DEFAULT_TIMEOUT), "[verify] timeout"),
            entry_points=bool(settings.get("entry_points", True)),
        )

    def covers(self, study: str | None) -> bool:
        """Whether citations of this study are this data layer's to verify."""
        return self.studies is None or study in self.studies

    def table(self, name: str, study: str | None, period: str | None) -> TableSource | None:
        """The most specific declared table of that name for the study and period."""
        fitting = [t for t in self.tables if t.name == name and t.study in (None, study) and t.period in (None, period)]
        return max(fitting, key=lambda t: (t.study is not None) + 2 * (t.period is not None), default=None)

    def extractor(self, name: str) -> Extractor | None:
        """A function declared in the file, else (unless disabled) an installed entry point."""
        if name in self.extractors:
            return self.extractors[name]
        if self.entry_points:
            for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name):
                version = point.dist.version if point.dist else None
                return Extractor(name, "entry_point", name, point.attr or "", version)
        return None

    def resolve(
        self, study: str | None, period: str | None, table: str | None, column: str | None, function: str | None
    ) -> Resolution:
        problem = None
        missing = [
            f"source.{key}"
            for key, value in (("table", table), ("column", column), ("function", function))
            if not isinstance(value, str) or not value
        ]
        source = self.table(table, study, period) if isinstance(table, str) else None
        extractor = self.extractor(function) if isinstance(function, str) and function else None
        if missing:
            problem = f"the citation names no {' or '.join(missing)}"
        elif source is None:
            problem = f"the data layer has no table {table!r} for study {study!r}, period {period!r}"
        elif extractor is None:
            problem = f"the data layer declares no extractor function {function!r}"
        table_sha = self._table_sha(source) if source else None
        if source and table_sha is None and problem is None:
            problem = f"table {source.describe()} is declared but its file is missing"
        version = self._extractor_version(extractor) if extractor else None
        if extractor and version is None and problem is None:
            problem = f"extractor {function!r} is declared as {extractor.label()}, which cannot be found"
        identity = {
            "table": source.spec() if source else None,
            "table_sha256": table_sha,
            "extractor": extractor.spec() if extractor else None,
            "extractor_version": version,
            "problem": problem,
        }
        return Resolution(source, extractor, problem, table_sha, version, _sha(orjson.dumps(identity)))

    def fingerprint(self) -> str:
        """The whole data layer: its file, every table's content, every declared extractor."""
        with open(self.path, "rb") as handle:
            parts = {
                "file": _sha(handle.read()),
                "tables": [(t.name, self._table_sha(t)) for t in self.tables],
                "extractors": [(e.name, self._extractor_version(e)) for e in self.extractors.values()],
            }
        return _sha(orjson.dumps(parts))

    def _table_sha(self, source: TableSource) -> str | None:
        digests = []
        for path in source.paths:
            digest = self._file_sha(path)
            if digest is None:
                return None
            digests.append(digest)
        return digests[0] if len(digests) == 1 else _sha("\n".join(digests).encode())

    def _file_sha(self, path: str) -> str | None:
        if path not in self._hashes:
            try:
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
            except OSError:
                return None
            self._hashes[path] = digest.hexdigest()
        return self._hashes[path]

    def _extractor_version(self, extractor: Extractor) -> str | None:
        """The declared version plus the module file's hash; for an entry point its distribution's version."""
        if extractor.kind == "entry_point":
            return extractor.version or "unversioned"
        if extractor.kind == "file":
            module_file = extractor.target
        else:
            try:
                spec = importlib.util.find_spec(extractor.target)
            except (ImportError, ValueError):
                spec = None
            module_file = spec.origin if spec and spec.origin and os.path.isfile(spec.origin) else None
        digest = self._file_sha(module_file) if module_file else None
        if digest is None:
            return None
        return f"{extractor.version or 'unversioned'}+sha256:{digest[:16]}"


def find_beside(archive: str) -> str | None:
    """The data layer of an archive when none is given: `<archive stem>.datalayer.toml` beside the
    archive file, else `archiver-data-layer.toml` in the archive's folder."""
    path = Path(os.path.abspath(archive))
    for candidate in (path.with_name(path.stem + ".datalayer.toml"), path.with_name(BESIDE_ARCHIVE)):
        if candidate.is_file():
            return str(candidate)
    return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise DataLayerError(f"{where} must be a table")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise DataLayerError(f"{where} must be an array of tables")
    return value


def _strings(value, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataLayerError(f"{where} must be a list of strings")
    return value


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise DataLayerError(f"{where} must be a non-negative number")
    return float(value)


def _optional_text(entry: dict, key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise DataLayerError(f"{where}: {key} must be a string")
    return value


def _table_source(entry, base: str, index: int) -> TableSource:
    where = f"[[tables]] #{index + 1}"
    entry = _table(entry, where)
    name = _optional_text(entry, "name", where)
    if not name:
        raise DataLayerError(f"{where}: name is required")
    where = f"table {name!r}"
    study, period = _optional_text(entry, "study", where), _optional_text(entry, "period", where)
    if "duckdb" in entry:
        database, table = _optional_text(entry, "duckdb", where), _optional_text(entry, "table", where)
        if not database or not table:
            raise DataLayerError(f"{where}: a DuckDB table needs both duckdb (the database file) and table")
        return TableSource(name, "duckdb", (os.path.join(base, database),), table, study, period)
    given = entry.get("path", entry.get("paths"))
    paths = [given] if isinstance(given, str) else given
    if not paths:
        raise DataLayerError(f"{where}: give path (a CSV or Parquet file) or duckdb and table")
    paths = _strings(paths, f"{where}: path")
    fmt = _optional_text(entry, "format", where) or TABLE_FORMATS.get(Path(paths[0]).suffix.lower())
    if fmt not in ("csv", "parquet"):
        raise DataLayerError(f'{where}: cannot tell the format of {paths[0]}; set format = "csv" or "parquet"')
    return TableSource(name, fmt, tuple(os.path.join(base, p) for p in paths), None, study, period)


def _extractor(name: str, value, base: str) -> Extractor:
    where = f"extractor {name!r}"
    if isinstance(value, str):
        module, _, function = value.partition(":")
        value = {"module": module, "function": function or name}
    value = _table(value, where)
    module = _optional_text(value, "module", where)
    if not module:
        raise DataLayerError(f"{where}: module is required (a .py file beside the data layer, or a dotted module)")
    function = _optional_text(value, "function", where) or name
    version = value.get("version")
    version = None if version is None else str(version)
    if module.endswith(".py") or os.sep in module or "/" in module:
        return Extractor(name, "file", os.path.join(base, module), function, version)
    return Extractor(name, "module", module, function, version)
