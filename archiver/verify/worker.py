"""Extractors run in a separate process, one job at a time, each bounded by a timeout.

The parent sends a job (table spec, extractor spec, column, citation context) over a pipe and waits
at most `timeout` seconds. An extractor that hangs is killed with its process, one that crashes
takes only its process down; either way the parent reports it and starts a fresh worker for the
next job. The worker imports only what the data layer declares.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import multiprocessing
import os
import sys
import traceback
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Self

import orjson

OK, FAILED = "ok", "failed"


@dataclass(frozen=True)
class CitationContext:
    """What an extractor is told about the citation besides the table and column."""

    study: str | None
    period: str | None
    weight: str | None  # the weight column, None when the citation says "unweighted" or names none
    base_name: str | None
    base_n: float | None
    table: str
    column: str
    function: str


@dataclass(frozen=True)
class Outcome:
    status: str  # ok | failed
    value: object = None  # the extractor's JSON value (ok)
    reason: str | None = None  # one sentence (failed)


class Worker:
    """A reusable extractor process; `run` returns an `Outcome`, never raises for the extractor's faults."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._process = None
        self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, table: dict, extractor: dict, context: CitationContext) -> Outcome:
        if self._process is None or not self._process.is_alive():
            self._start()
        try:
            self._conn.send((table, extractor, asdict(context)))
            if not self._conn.poll(self.timeout):
                self._stop()
                return Outcome(FAILED, reason=f"the extractor did not finish within {self.timeout:g}s and was stopped")
            status, payload = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = self._stop()
            return Outcome(FAILED, reason=f"the extractor's process died (exit code {code})")
        if status == OK:
            return Outcome(OK, value=orjson.loads(payload))
        return Outcome(FAILED, reason=payload)

    def close(self) -> None:
        if self._process is not None and self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._process.join(2)
        self._stop()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding DuckDB's threads
        parent, child = ctx.Pipe()
        self._process = ctx.Process(target=serve, args=(child,), daemon=True, name="archiver-extractor")
        self._process.start()
        child.close()
        self._conn = parent

    def _stop(self) -> int | None:
        process, self._process = self._process, None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if process is None:
            return None
        if process.is_alive():
            process.kill()
        process.join(5)
        return process.exitcode


def serve(conn) -> None:
    """The worker's loop: one job in, one (status, payload) out, until told to stop."""
    os.dup2(2, 1)  # an extractor's prints must not mix with the archiver's output
    functions: dict = {}
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(_job(*job, functions))


def _job(table: dict, extractor: dict, context: dict, functions: dict) -> tuple[str, str]:
    import duckdb

    from ..store.backend import offline_connection

    try:
        function = _function(extractor, functions)
    except Exception as exc:
        return FAILED, f"the extractor could not be loaded: {_one_line(exc)}"
    con = offline_connection()
    try:
        try:
            relation = _relation(con, table)
            columns = set(relation.columns)
        except duckdb.Error as exc:
            return FAILED, f"the table could not be read: {_one_line(exc)}"
        if context["column"] not in columns:
            return FAILED, f"the table has no column {context['column']!r}"
        if context["weight"] is not None and context["weight"] not in columns:
            return FAILED, f"the table has no weight column {context['weight']!r}"
        try:
            value = function(relation, context["column"], CitationContext(**context))
        except Exception as exc:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            return FAILED, f"the extractor raised {_one_line(exc)} ({os.path.basename(frame.filename)}:{frame.lineno})"
        try:
            return OK, orjson.dumps(value, default=_plain).decode()
        except TypeError as exc:
            return FAILED, f"the extractor returned a value that is not JSON: {exc}"
    finally:
        con.close()


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


def _plain(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
