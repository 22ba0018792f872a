"""Extractors run in a separate process, one job at a time, each bounded by a timeout.

The parent sends a job (table spec, extractor spec, column, citation context) over a pipe and waits at
most `timeout` seconds, counted from a worker that is ready (started, DuckDB imported, its time zones
loaded): starting one on a loaded machine took more than a second, which a short timeout charged to the
extractor, and DuckDB's first time zone setting takes 0.45 s. An extractor that
hangs is killed with its process, one that crashes takes only its process down; either way the parent
reports it and starts a fresh worker for the next job. The worker leads its own process group, and
the group is killed whole when the worker stops: a process the extractor started (a `sleep`, a
subprocess of its own) does not outlive it. The worker imports only what the data layer declares.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import multiprocessing
import os
import signal
import sys
import traceback
from dataclasses import asdict, dataclass
from datetime import date
from typing import Self

from .datalayer import DEFAULT_TIME_ZONE
from .imports import ImportLog
from .periods import describe as describe_span
from .periods import span as calendar_span
from .periods import within
from .values import plain

OK, FAILED = "ok", "failed"
Reply = tuple[str, object, str | None, dict | None]
"""A worker's answer to a job: (ok | failed, the JSON value or why it failed, the rows used, what they hold)."""
READY = "ready"
STARTUP_SECONDS = 120.0
"""How long a new worker may take to start and import DuckDB before the job is given up."""
EXIT_SECONDS = 5.0
"""How long a worker whose pipe closed may take to exit on its own, so its real exit code is reported."""


@dataclass(frozen=True)
class CitationContext:
    """What an extractor is told about the citation besides the table and column."""

    study: str | None
    period: str | None
    weight: str | None  # the weight column, None when the citation says "unweighted" or "none", or names none
    base_name: str | None
    base_n: float | None
    table: str
    column: str
    function: str
    fielded_start: date | None = None  # the citation's fielded window, parsed
    fielded_end: date | None = None
    period_as: str | None = None  # the calendar period the data layer's `[periods]` maps the period to


@dataclass(frozen=True)
class Outcome:
    status: str  # ok | failed
    value: object = None  # the extractor's JSON value (ok)
    reason: str | None = None  # one sentence (failed)
    rows: str | None = None  # which rows the extractor was given: "rows fielded 2026-04-02..2026-04-19: 4,210"
    timed_out: bool = False
    coverage: dict | None = None  # what those rows hold (`coverage.Coverage`'s fields)
    loaded: tuple[str, ...] = ()  # the project's module files the extractor imported (`imports.ImportLog`)


class Worker:
    """A reusable extractor process; `run` returns an `Outcome`, never raises for the extractor's faults."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._process = None
        self._conn = None
        self._group: int | None = None  # the worker's process group, once it is ready

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, table: dict, extractor: dict, context: CitationContext) -> Outcome:
        if self._process is None or not self._process.is_alive():
            failed = self._start()
            if failed is not None:
                return failed
        try:
            self._conn.send((table, extractor, asdict(context)))
            if not self._conn.poll(self.timeout):
                self._stop()
                reason = f"the extractor did not finish within {self.timeout:g}s and was stopped"
                return Outcome(FAILED, reason=reason, timed_out=True)
            status, payload, rows, coverage, loaded = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = self._stop(wait=EXIT_SECONDS)
            return Outcome(FAILED, reason=f"the extractor's process {exit_words(code)}")
        if status == OK:
            return Outcome(OK, value=payload, rows=rows, coverage=coverage, loaded=tuple(loaded))
        return Outcome(FAILED, reason=payload, rows=rows, coverage=coverage, loaded=tuple(loaded))

    def close(self) -> None:
        if self._process is not None and self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._process.join(2)
        self._stop()

    def _start(self) -> Outcome | None:
        """A fresh worker, waited for until it is ready: None, or why it could not start."""
        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding DuckDB's threads
        parent, child = ctx.Pipe()
        self._process = ctx.Process(target=serve, args=(child,), daemon=True, name="archiver-extractor")
        self._process.start()
        child.close()
        self._conn = parent
        try:
            if parent.poll(STARTUP_SECONDS) and parent.recv() == READY:
                self._group = self._process.pid  # the worker made itself a group leader before READY
                return None
        except (EOFError, OSError):
            pass
        code = self._stop(wait=EXIT_SECONDS)
        return Outcome(FAILED, reason=f"the extractor's process did not start ({exit_words(code)})")

    def _stop(self, wait: float = 0.0) -> int | None:
        """Stop the worker and every process of its group; its exit code (negative: the signal that
        ended it). `wait`: seconds it may take to exit on its own first."""
        process, self._process = self._process, None
        group, self._group = self._group, None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if process is None:
            return None
        if wait and process.is_alive():
            process.join(wait)
        if group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        if process.is_alive():
            process.kill()
        process.join(5)
        return process.exitcode


def exit_words(code: int | None) -> str:
    """How a process ended, as it did: "exited with code 0", "was killed by SIGKILL (signal 9)"."""
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "a signal"
        return f"was killed by {name} (signal {-code})"
    return f"exited with code {code}"


def serve(conn) -> None:
    """The worker's loop: one job in, one (status, payload) out, until told to stop."""
    os.dup2(2, 1)  # an extractor's prints must not mix with the archiver's output
    os.setpgid(0, 0)  # a group of its own, killed whole at a timeout with whatever the extractor started
    import duckdb  # noqa: F401  (imported before the first job's time starts)

    from ..offline import offline_connection

    offline_connection(DEFAULT_TIME_ZONE).close()  # DuckDB loads its time zones (0.45 s) before the first job's time
    conn.send(READY)
    functions: dict = {}
    loaded: dict[tuple, set[str]] = {}  # the project's module files each extractor imported, loading or running
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        table, extractor, context = job
        key = (extractor["kind"], extractor["target"], extractor["function"])
        with ImportLog() as log:
            reply = _job(table, extractor, context, functions)
        loaded.setdefault(key, set()).update(log.project_files())
        conn.send((*reply, sorted(loaded[key])))


def _job(table: dict, extractor: dict, context: dict, functions: dict) -> Reply:
    """(status, the JSON value or why it failed, the rows used, what they hold) of one extractor on one
    citation."""
    import duckdb

    from ..offline import offline_connection

    try:
        function = _function(extractor, functions)
    except Exception as exc:
        return FAILED, f"the extractor could not be loaded: {_one_line(exc)}", None, None
    try:
        con = offline_connection(table["time_zone"])  # calendar dates in the data layer's zone, never the machine's
    except duckdb.Error as exc:
        return FAILED, f"the time zone {table['time_zone']!r} cannot be used: {_one_line(exc)}", None, None
    try:
        return _run_on(con, function, table, context)
    finally:
        con.close()


def _run_on(con, function, table: dict, context: dict) -> Reply:
    import duckdb

    try:
        relation = _relation(con, table)
        columns = set(relation.columns)
    except duckdb.Error as exc:
        return FAILED, f"the table could not be read: {_one_line(exc)}", None, None
    for kind, name in (("", context["column"]), ("weight ", context["weight"]), *_scope_columns(table)):
        if name is not None and name not in columns:
            return FAILED, f"the table has no {kind}column {name!r}", None, None
    try:
        scope = _scoped(relation, table, context)
    except duckdb.Error as exc:
        return FAILED, f"the table's rows could not be narrowed to the citation: {_one_line(exc)}", None, None
    if scope.empty:
        return FAILED, scope.empty, scope.rows, scope.coverage
    status, payload = _call(function, scope.relation, context)
    return status, payload, scope.rows, scope.coverage


def _call(function, relation, context: dict) -> tuple[str, object]:
    """(ok, the value as plain JSON-shaped Python, NaN kept) or (failed, why)."""
    try:
        value = function(relation, context["column"], CitationContext(**context))
    except SystemExit as exc:
        return FAILED, f"the extractor called sys.exit({exc.code!r}) instead of returning ({_where(exc)})"
    except Exception as exc:
        return FAILED, f"the extractor raised {_one_line(exc)} ({_where(exc)})"
    try:
        return OK, plain(value)
    except TypeError as exc:
        return FAILED, f"the extractor returned a value that is not JSON: {exc}"


def _where(exc: BaseException) -> str:
    """The file and line the extractor was at when it raised."""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{os.path.basename(frame.filename)}:{frame.lineno}"


def _scope_columns(table: dict) -> list[tuple[str, str | None]]:
    return [("period column ", table["period_column"]), ("date column ", table["date_column"])]


@dataclass(frozen=True)
class Scope:
    """The rows of a table a citation concerns, and what is known of them."""

    relation: object
    rows: str | None = None  # "rows fielded 2026-04-02..2026-04-19: 4,210 of 4,250"
    empty: str | None = None  # why no row is the citation's
    coverage: dict | None = None  # `coverage.Coverage`'s fields


def _scoped(relation, table: dict, context: dict) -> Scope:
    """The rows of the cited period and fielded window. A table declares its period column and date
    column for this; a window it cannot apply is named in the coverage (`unscoped`)."""
    conditions, words, day, unscoped = [], [], None, None
    if table["period_column"]:
        if context["period"] is None:
            return Scope(relation, empty=f"the citation names no period to pick from column {table['period_column']!r}")
        condition, said = _period_condition(relation, table["period_column"], context)
        conditions.append(condition)
        words.append(said)
    start, end = context["fielded_start"], context["fielded_end"]
    if table["date_column"] and start and end:
        day = f"CAST({_quote(table['date_column'])} AS DATE)"  # in the connection's (declared) time zone
        conditions.append(f"{day} BETWEEN DATE '{start.isoformat()}' AND DATE '{end.isoformat()}'")
        words.append(f"fielded {start.isoformat()}..{end.isoformat()}" + _zone_words(relation, table))
    elif start and end:
        unscoped = (
            f"the fielded window {start}..{end} was not applied: table {table['name']!r} declares no date_column "
            "(declare date_column = the column of each row's fielding date)"
        )
    total = relation.aggregate("count(*)").fetchone()[0]
    if not conditions:
        note = "" if not (start and end) else f" (no date column declared: fielded {start}..{end} not applied)"
        coverage = _measure(relation, context, None) | {"unscoped": unscoped}
        return Scope(relation, f"all rows: {total:,}{note}", coverage=coverage)
    relation = relation.filter(" AND ".join(conditions))
    coverage = _measure(relation, context, day) | {"unscoped": unscoped}
    rows = f"rows {' and '.join(words)}: {coverage['rows']:,} of {total:,}"
    if coverage["rows"] == 0:
        return Scope(relation, rows, f"table {table['name']!r} has no rows {' and '.join(words)}", coverage)
    return Scope(relation, rows, coverage=coverage)


def _period_condition(relation, column: str, context: dict) -> tuple[str, str]:
    """The rows of the cited period: those whose `column` is the period as written, else, when the period
    is a calendar period (or `[periods]` maps it to one), those whose `column` is a period inside it
    (a quarter's months, a month's ISO weeks, days)."""
    period, quoted = context["period"], _quote(column)
    exact = f"CAST({quoted} AS VARCHAR) = {_literal(period)}"  # a DATE column compared with "April 2026" too
    outer = calendar_span(context["period_as"] or period)
    if outer is None or relation.filter(exact).aggregate("count(*)").fetchone()[0]:
        return exact, f"with {column} = {period!r}"
    values = relation.query("t", f"SELECT DISTINCT {quoted} FROM t WHERE {quoted} IS NOT NULL").fetchall()
    inside = sorted(str(value) for (value,) in values if within(calendar_span(value), outer))
    listed = ", ".join(inside[:6]) + (", …" if len(inside) > 6 else "")
    said = f"with {column} in {period!r} ({describe_span(outer)}: {listed or 'none'})"
    if not inside:
        return "FALSE", said
    return f"CAST({quoted} AS VARCHAR) IN ({', '.join(_literal(v) for v in inside)})", said


def _measure(relation, context: dict, day: str | None) -> dict:
    """The rows' count, weighted sum and, with a fielded window applied (`day`: the row's date), the
    first, last and distinct dates present: `coverage.Coverage`'s fields."""
    weight = f"sum({_quote(context['weight'])})::DOUBLE" if context["weight"] else "NULL"
    dates = f"min({day}), max({day}), count(DISTINCT {day})" if day else "NULL, NULL, 0"
    rows, weighted, first, last, days = relation.query("t", f"SELECT count(*), {weight}, {dates} FROM t").fetchone()
    found = {"rows": rows, "weighted": weighted, "first": first, "last": last, "days_present": days}
    if day:
        found |= {"window_start": context["fielded_start"], "window_end": context["fielded_end"]}
    return {key: value.isoformat() if isinstance(value, date) else value for key, value in found.items()}


def _zone_words(relation, table: dict) -> str:
    """ " (dates in UTC)" when the date column holds moments (a timestamp with time zone), whose calendar
    date is taken in the data layer's time zone."""
    kind = dict(zip(relation.columns, relation.types, strict=True))[table["date_column"]]
    return f" (dates in {table['time_zone']})" if str(kind) == "TIMESTAMP WITH TIME ZONE" else ""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _function(extractor: dict, functions: dict):
    key = (extractor["kind"], extractor["target"], extractor["function"])
    if key not in functions:
        if extractor["kind"] == "entry_point":
            (point,) = importlib.metadata.entry_points(group="archiver.extractors", name=extractor["target"])
            functions[key] = point.load()
        else:
            module = _module(extractor)
            functions[key] = getattr(module, extractor["function"])
    return functions[key]


def _module(extractor: dict):
    if extractor["kind"] == "module":
        return importlib.import_module(extractor["target"])
    path = extractor["target"]
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # the extractor's own helper modules beside it
    name = "archiver_extractor_" + hashlib.sha256(path.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _relation(con, table: dict):
    paths = table["paths"]
    if table["format"] == "csv":
        return con.read_csv(paths if len(paths) > 1 else paths[0])
    if table["format"] == "parquet":
        return con.read_parquet(paths if len(paths) > 1 else paths[0])
    con.execute("ATTACH ? AS data_layer (READ_ONLY)", [paths[0]])
    return con.table("data_layer." + ".".join(_quote(part) for part in table["table"].split(".")))


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
