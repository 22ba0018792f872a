"""The data layer file: the tables agents cite and the functions that re-derive their numbers.

A TOML file (see the README, "The data layer file") names tables, each backed by a CSV or Parquet file or a table in
a DuckDB database, optionally for one study and one period (a wave's snapshot), and extractors,
each a function in a module the file names (a path beside it or a dotted module) or found in the
`archiver.extractors` entry-point group. A citation's `source.table` and `source.function` are
only ever looked up here: nothing named inside a transcript is imported or run.
"""

from __future__ import annotations

import ast
import fnmatch
import glob
import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import tomllib
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..errors import VerifyError
from .compare import AS_ROUNDED, Comparison
from .imports import installed
from .periods import span as calendar_span

ENTRY_POINT_GROUP = "archiver.extractors"
DEFAULT_TIMEOUT = 60.0
BESIDE_ARCHIVE = "archiver-data-layer.toml"
TABLE_FORMATS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}
DEFAULT_TIME_ZONE = "UTC"
"""The zone a timestamp with time zone is read in to give its calendar date, unless the data layer says."""


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
    period: str | None = None  # the period its rows are: an exact value or a glob ("W5*")
    period_column: str | None = None  # or the column saying each row's period
    date_column: str | None = None  # the column of each row's fielding date
    comparison: Comparison | None = None  # the table's own tolerance, else the data layer's
    time_zone: str = DEFAULT_TIME_ZONE  # the zone its timestamps' calendar dates are taken in

    def describe(self) -> str:
        where = ", ".join(self.paths) + (f" table {self.table}" if self.table else "")
        return f"{self.name} ({self.format}: {where})"

    def period_match(self, period: str | None) -> int | None:
        """How closely this table's declared period fits a citation's: 3 exact, 2 glob, 1 by its period
        column, 0 declares none; None when it does not fit."""
        if self.period is None:
            return 1 if self.period_column else 0
        if period is None:
            return None
        if self.period == period:
            return 3
        return 2 if fnmatch.fnmatchcase(period, self.period) else None

    def spec(self) -> dict:
        """What a worker process needs to open it and keep the rows a citation concerns."""
        return {
            "name": self.name,
            "format": self.format,
            "paths": list(self.paths),
            "table": self.table,
            "period_column": self.period_column,
            "date_column": self.date_column,
            "time_zone": self.time_zone,
        }


@dataclass(frozen=True)
class Extractor:
    """A declared re-run function: `kind` file (a module file), module (dotted) or entry_point."""

    name: str
    kind: str
    target: str
    function: str
    version: str | None = None
    study: str | None = None  # the extractor answers for this study only
    table: str | None = None  # ... or this table only
    inputs: tuple[str, ...] = ()  # globs of the files it reads besides the table (lookups, weights)

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
    comparison: Comparison = AS_ROUNDED  # how its claims compare: the command line's, the table's or the layer's
    files: dict[str, str] = field(default_factory=dict)  # every file it rests on: its SHA-256


@dataclass
class DataLayer:
    path: str
    tables: list[TableSource]
    extractors: dict[str, list[Extractor]]  # by source.function, most specific first
    studies: frozenset[str] | None  # None: every study
    comparison: Comparison = AS_ROUNDED
    timeout: float = DEFAULT_TIMEOUT
    time_zone: str = DEFAULT_TIME_ZONE
    entry_points: bool = True
    periods: dict[str, str] = field(default_factory=dict)  # a citation's period label: the calendar period it is
    inputs: tuple[str, ...] = ()  # globs of files every extractor reads besides its table
    _hashes: dict[str, str] = field(default_factory=dict, repr=False)
    _code: dict[str, str] = field(default_factory=dict, repr=False)  # a module file's code hash, once per load
    _imports: dict[str, tuple] = field(default_factory=dict, repr=False)  # a module file's `code_of`, once per load

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
        zone = _time_zone(settings, "[verify]") or DEFAULT_TIME_ZONE
        tables = [
            _table_source(entry, base, index, zone)
            for index, entry in enumerate(_list(doc.get("tables", []), "[[tables]]"))
        ]
        extractors = {
            name: _extractors(name, value, base)
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
            comparison=_comparison(settings, "[verify]") or AS_ROUNDED,
            timeout=_number(settings.get("timeout", DEFAULT_TIMEOUT), "[verify] timeout"),
            time_zone=_time_zone(settings, "[verify]") or DEFAULT_TIME_ZONE,
            periods=_periods(doc.get("periods", {})),
            inputs=_inputs(settings, "[verify]", base),
            entry_points=bool(settings.get("entry_points", True)),
        )

    def covers(self, study: str | None) -> bool:
        """Whether citations of this study are this data layer's to verify."""
        return self.studies is None or study in self.studies

    def table(self, name: str, study: str | None, period: str | None) -> TableSource | None:
        """The most specific declared table of that name for the study and period: a period matched
        exactly, then by glob, then by a period column, then a table for every period."""
        fitting = [
            (match, t.study is not None, -index, t)
            for index, t in enumerate(self.tables)
            if t.name == name and t.study in (None, study) and (match := t.period_match(period)) is not None
        ]
        return max(fitting, key=lambda f: f[:3], default=(None,) * 4)[3]

    def extractor(self, name: str, study: str | None = None, table: str | None = None) -> Extractor | None:
        """The declared function of that name for the study and table (keyed by study and table, by one
        of them, or by name alone), else (unless disabled) an installed entry point."""
        fitting = [e for e in self.extractors.get(name, ()) if e.study in (None, study) and e.table in (None, table)]
        if fitting:
            return max(fitting, key=lambda e: 2 * (e.study is not None) + (e.table is not None))
        if name in self.extractors:
            return None
        if self.entry_points:
            for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name):
                version = point.dist.version if point.dist else None
                return Extractor(name, "entry_point", name, point.attr or "", version)
        return None

    def resolve(
        self,
        study: str | None,
        period: str | None,
        table: str | None,
        column: str | None,
        function: str | None,
        comparison: Comparison | None = None,
    ) -> Resolution:
        """The table and extractor a citation's source triple names, and the fingerprint of everything
        the verdict rests on; `comparison` (the command line's) overrides the table's and the layer's."""
        problem = None
        missing = [
            f"source.{key}"
            for key, value in (("table", table), ("column", column), ("function", function))
            if not isinstance(value, str) or not value
        ]
        source = self.table(table, study, period) if isinstance(table, str) else None
        extractor = self.extractor(function, study, table) if isinstance(function, str) and function else None
        if missing:
            problem = f"the citation names no {' or '.join(missing)}"
        elif source is None:
            problem = f"the data layer has no table {table!r} for study {study!r}, period {period!r}"
        elif extractor is None:
            problem = f"the data layer declares no extractor function {function!r}" + (
                f" for study {study!r}, table {table!r}" if function in self.extractors else ""
            )
        table_sha = self._table_sha(source) if source else None
        if source and table_sha is None and problem is None:
            problem = f"table {source.describe()} is declared but its file is missing"
        version = self._extractor_version(extractor) if extractor else None
        if extractor and version is None and problem is None:
            problem = f"extractor {function!r} is declared as {extractor.label()}, which cannot be found"
        comparison = comparison or self.comparison_for(source)
        files = self._files(source, extractor)
        identity = {
            "inputs": sorted(files.items()),
            "table": source.spec() if source else None,
            "period_as": self.periods.get(period) if source and source.period_column else None,
            "table_sha256": table_sha,
            "extractor": extractor.spec() if extractor else None,
            "extractor_version": version,
            "comparison": comparison.describe(),
            "problem": problem,
        }
        fingerprint = _sha(orjson.dumps(identity))
        return Resolution(source, extractor, problem, table_sha, version, fingerprint, comparison, files)

    def _files(self, source: TableSource | None, extractor: Extractor | None) -> dict[str, str]:
        """The files a verdict rests on, each with its SHA-256: the table's, the extractor's code (the
        module and the project-local modules it imports) and the inputs declared for it."""
        paths = list(source.paths) if source else []
        if extractor and extractor.kind != "entry_point":
            module_file = extractor.target if extractor.kind == "file" else _module_origin(extractor.target)
            paths += sorted(self._code_of(module_file)[0]) if module_file and os.path.isfile(module_file) else []
        if extractor:
            paths += self.input_files(extractor)
        return {path: digest for path in paths if (digest := self.file_sha(path)) is not None}

    def input_files(self, extractor: Extractor) -> list[str]:
        """The files the declared `inputs` globs match now (the data layer's and the extractor's)."""
        found = {p for pattern in (*self.inputs, *extractor.inputs) for p in glob.glob(pattern, recursive=True)}
        return sorted(p for p in found if os.path.isfile(p))

    def file_sha(self, path: str) -> str | None:
        """A file's SHA-256, once per load of the data layer; None when it cannot be read."""
        return self._file_sha(path)

    def fingerprint(self) -> str:
        """The whole data layer: its file, every table's content, every declared extractor."""
        with open(self.path, "rb") as handle:
            parts = {
                "file": _sha(handle.read()),
                "tables": [(t.name, self._table_sha(t)) for t in self.tables],
                "extractors": [
                    (e.name, e.study, e.table, self._extractor_version(e))
                    for declared in self.extractors.values()
                    for e in declared
                ],
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

    def comparison_for(self, source: TableSource | None) -> Comparison:
        return source.comparison if source and source.comparison else self.comparison

    def _extractor_version(self, extractor: Extractor) -> str | None:
        """The declared version plus a hash of the code it runs: the module's source, the project-local
        modules it imports (transitively) and the versions of the installed packages they import; for
        an entry point its distribution's version."""
        if extractor.kind == "entry_point":
            return extractor.version or "unversioned"
        module_file = extractor.target if extractor.kind == "file" else _module_origin(extractor.target)
        if not module_file or self._file_sha(module_file) is None:
            return None
        return f"{extractor.version or 'unversioned'}+sha256:{self._code_sha(module_file)[:16]}"

    def _code_of(self, module_file: str) -> tuple[set[str], dict[str, str]]:
        if module_file not in self._imports:
            self._imports[module_file] = code_of(module_file)
        return self._imports[module_file]

    def _code_sha(self, module_file: str) -> str:
        if module_file not in self._code:
            files, packages = self._code_of(module_file)
            parts = [(os.path.relpath(f, os.path.dirname(module_file)), self._file_sha(f)) for f in sorted(files)]
            self._code[module_file] = _sha(orjson.dumps({"files": parts, "packages": sorted(packages.items())}))
        return self._code[module_file]


def code_of(module_file: str) -> tuple[set[str], dict[str, str]]:
    """The project-local module files a module imports, itself included and transitively, and the
    installed distributions (name: version) they import. Read from the source; nothing is imported."""
    files: set[str] = set()
    packages: dict[str, str] = {}
    pending = [module_file]
    distributions = importlib.metadata.packages_distributions()
    while pending:
        path = pending.pop()
        if path in files:
            continue
        files.add(path)
        for name in _imports(path):
            local = _local_module(name, os.path.dirname(path))
            if local:
                pending.append(local)
            elif name.split(".")[0] not in sys.stdlib_module_names:
                for dist in distributions.get(name.split(".")[0], ()):
                    packages[dist] = _dist_version(dist)
    return files, packages


def _imports(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            names += [("." * node.level) + (node.module or "") + ("." + alias.name) for alias in node.names]
    return names


def _local_module(name: str, folder: str) -> str | None:
    """The file of a module of the project (beside the importing file, or importable but not installed
    nor in the standard library), else None."""
    if name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        base = folder
        for _ in range(level - 1):
            base = os.path.dirname(base)
        parts = [p for p in name.lstrip(".").split(".") if p]
    else:
        base, parts = folder, name.split(".")
    for count in range(len(parts), 0, -1):
        stem = os.path.join(base, *parts[:count])
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    if name.startswith(".") or name.split(".")[0] in sys.stdlib_module_names:
        return None
    origin = _module_origin(name)
    return origin if origin and not installed(origin) else None


def _module_origin(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec and spec.origin and os.path.isfile(spec.origin) else None


def _dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


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


def _comparison(entry: dict, where: str) -> Comparison | None:
    """An absolute or relative tolerance (`tolerance` is the relative one), or None: compare as rounded."""
    absolute, relative = entry.get("absolute"), entry.get("relative", entry.get("tolerance"))
    if absolute is not None and relative is not None:
        raise DataLayerError(f"{where}: give absolute or relative, not both")
    if absolute is not None:
        return Comparison(absolute=_number(absolute, f"{where} absolute"))
    if relative is not None:
        return Comparison(relative=_number(relative, f"{where} relative"))
    return None


def _optional_text(entry: dict, key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise DataLayerError(f"{where}: {key} must be a string")
    return value


def _periods(value) -> dict[str, str]:
    """`[periods]`: a citation's period label ("Wave 6") and the calendar period it is ("2026-04",
    "2026-Q2", "2026-W14", or a range "2026-04-02/2026-04-19")."""
    mapping = _table(value, "[periods]")
    for label, period in mapping.items():
        if not isinstance(period, str) or calendar_span(period) is None:
            raise DataLayerError(
                f"[periods] {label!r}: {period!r} is not a calendar period (a month 2026-04, a quarter 2026-Q2, "
                "a half 2026-H1, an ISO week 2026-W14, a year, a day or a range 2026-04-02/2026-04-19)"
            )
    return mapping


def _inputs(entry: dict, where: str, base: str) -> tuple[str, ...]:
    """`inputs`: globs (relative to the data layer file, `**` for any depth) of files an extractor reads."""
    given = entry.get("inputs", [])
    return tuple(os.path.join(base, pattern) for pattern in _strings(given, f"{where}: inputs"))


def _time_zone(entry: dict, where: str) -> str | None:
    """A declared IANA time zone ("Europe/Paris", "UTC"), checked to exist."""
    zone = _optional_text(entry, "time_zone", where)
    if zone is None:
        return None
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise DataLayerError(
            f'{where}: time_zone {zone!r} is not a known time zone (e.g. "UTC", "Europe/Paris")'
        ) from None
    return zone


def _table_source(entry, base: str, index: int, zone: str = DEFAULT_TIME_ZONE) -> TableSource:
    where = f"[[tables]] #{index + 1}"
    entry = _table(entry, where)
    name = _optional_text(entry, "name", where)
    if not name:
        raise DataLayerError(f"{where}: name is required")
    where = f"table {name!r}"
    scope = {key: _optional_text(entry, key, where) for key in ("study", "period", "period_column", "date_column")}
    if scope["period"] and scope["period_column"]:
        raise DataLayerError(f"{where}: give period (its rows' period) or period_column, not both")
    scope["comparison"] = _comparison(entry, where)
    scope["time_zone"] = _time_zone(entry, where) or zone
    if "duckdb" in entry:
        database, table = _optional_text(entry, "duckdb", where), _optional_text(entry, "table", where)
        if not database or not table:
            raise DataLayerError(f"{where}: a DuckDB table needs both duckdb (the database file) and table")
        return TableSource(name, "duckdb", (os.path.join(base, database),), table, **scope)
    given = entry.get("path", entry.get("paths"))
    paths = [given] if isinstance(given, str) else given
    if not paths:
        raise DataLayerError(f"{where}: give path (a CSV or Parquet file) or duckdb and table")
    paths = _strings(paths, f"{where}: path")
    fmt = _optional_text(entry, "format", where) or TABLE_FORMATS.get(Path(paths[0]).suffix.lower())
    if fmt not in ("csv", "parquet"):
        raise DataLayerError(f'{where}: cannot tell the format of {paths[0]}; set format = "csv" or "parquet"')
    return TableSource(name, fmt, tuple(os.path.join(base, p) for p in paths), None, **scope)


def _extractors(name: str, value, base: str) -> list[Extractor]:
    """One declaration (a string or a table), or an array of them keyed by study and/or table."""
    if isinstance(value, list):
        declared = [_extractor(name, entry, base) for entry in value]
        keys = [(e.study, e.table) for e in declared]
        if len(set(keys)) < len(keys):
            raise DataLayerError(f"extractor {name!r}: two declarations for the same study and table")
        return declared
    return [_extractor(name, value, base)]


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
    keys = {"study": _optional_text(value, "study", where), "table": _optional_text(value, "table", where)}
    keys["inputs"] = _inputs(value, where, base)
    if module.endswith(".py") or os.sep in module or "/" in module:
        return Extractor(name, "file", os.path.join(base, module), function, version, **keys)
    return Extractor(name, "module", module, function, version, **keys)
