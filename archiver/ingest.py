"""Ingest: read containers into records, understand A2A, apply Citations v1, load the index.

One source file at a time, each committed atomically; unchanged files are
skipped by their SHA-256, changed or grown ones add only their new records.
"""
from __future__ import annotations

import fnmatch
import glob
import json
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import duckdb
import orjson

from .load.rows import FileRows, arrow_schemas
from .load.writer import write_files
from .read.containers import SourceFile, read_records
from .read.decode import decode
from .read.records import Record
from .store.claims import Claims
from .understand.assemble import FileAssembly
from .understand.dialects import NotUnderstood, events_of, task_of_store_row

STDIN = "<stdin>"


@dataclass
class FileOutcome:
    path: str
    container: str | None = None
    records: int = 0
    new_records: int = 0
    quarantined: int = 0
    recognised: int = 0
    unchanged: bool = False
    problems: list[str] = field(default_factory=list)
    elsewhere: str | None = None
    """Why another writer of the same lake has this file (it holds the claim, or stored it first)."""


@dataclass
class IngestSummary:
    files: int = 0
    files_unchanged: int = 0
    records: int = 0
    duplicates_skipped: int = 0
    quarantined: int = 0
    tasks: int = 0
    results: int = 0
    copies: int = 0
    parts: int = 0
    citations: int = 0
    claims: int = 0
    agent_cards: int = 0
    error_responses: int = 0
    unrecognised_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    claimed_elsewhere: list[str] = field(default_factory=list)
    claims_taken_over: list[str] = field(default_factory=list)
    commit_retries: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


IGNORE_FILE = ".archiverignore"


def expand(paths: Iterable[str]) -> Iterator[SourceFile]:
    """Files, directories (recursively, in name order), globs and "-" for standard input.

    In a directory walk, hidden files are passed over, and so is whatever a
    `.archiverignore` file (one glob per line, `dir/` for a folder) names
    beside or above it in the walk. A file named explicitly is always read.
    """
    for given in paths:
        if given == "-":
            yield SourceFile(STDIN, sys.stdin.buffer.read())
            continue
        matches = sorted(glob.glob(given, recursive=True)) if glob.has_magic(given) else [given]
        if not matches:
            raise FileNotFoundError(f"{given}: no such file or directory")
        for match in matches:
            if os.path.isdir(match):
                yield from _walk(match)
            elif os.path.exists(match):
                yield SourceFile(os.path.abspath(match))
            else:
                raise FileNotFoundError(f"{match}: no such file or directory")


def _walk(top: str) -> Iterator[SourceFile]:
    rules: dict[str, list[str]] = {}
    for root, dirs, files in os.walk(top, followlinks=False):
        rules[root] = _ignore_rules(root)
        inherited = [(base, pattern) for base, patterns in rules.items()
                     if root == base or root.startswith(base.rstrip(os.sep) + os.sep) for pattern in patterns]
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not _ignored(os.path.join(root, d), inherited, folder=True))
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.startswith(".") and not _ignored(path, inherited, folder=False):
                yield SourceFile(os.path.abspath(path))


def _ignore_rules(folder: str) -> list[str]:
    try:
        with open(os.path.join(folder, IGNORE_FILE), encoding="utf-8") as handle:
            return [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    except OSError:
        return []


def _ignored(path: str, rules: list[tuple[str, str]], folder: bool) -> bool:
    for base, pattern in rules:
        relative = os.path.relpath(path, base)
        if pattern.endswith("/"):
            if folder and fnmatch.fnmatch(relative, pattern.rstrip("/")):
                return True
        elif fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            return True
    return False


def index_file(source: SourceFile, sha256: str, records: Iterator[Record], now: datetime) -> tuple[FileRows, FileOutcome]:
    """Understand every record of one source; the rows it contributes and what happened."""
    rows = FileRows(source.path, sha256, now)
    outcome = FileOutcome(source.path)
    assembly = FileAssembly()
    for record in records:
        record_id = rows.record_id(record)
        if record.kind == "filler":
            rows.add_record(record, record_id, "filler", None)
            continue
        outcome.records += 1
        try:
            if record.kind == "unreadable":
                raise NotUnderstood(record.error)
            value = record.value if record.kind == "row" else decode(record.payload)
            events = [task_of_store_row(value)] if record.kind == "row" else events_of(value)
            rpc_id = value.get("id") if isinstance(value, dict) and "jsonrpc" in value else None
            assembly.add(record_id, rpc_id, events)
        except (ValueError, RecursionError, TypeError) as exc:
            reason = _one_line(exc)
            rows.add_record(record, record_id, "quarantined", reason)
            outcome.quarantined += 1
            outcome.problems.append(f"{source.path}: {record.locator}: {reason}")
            continue
        rows.add_record(record, record_id, "ok", None)
        outcome.recognised += 1
    for copy in assembly.copies():
        rows.add_copy(copy)
    for record_id, card in assembly.cards:
        rows.add_card(record_id, card)
    for record_id, error in assembly.errors:
        rows.add_error(record_id, error)
    return rows, outcome


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, orjson.JSONDecodeError) or type(exc) is json.JSONDecodeError:
        text = f"invalid JSON: {text}"
    return text[:300]


@dataclass
class PreparedFile:
    """What a worker hands the writer for one source file: its outcome and its Arrow batches."""

    outcome: FileOutcome
    tables: list
    source_row: dict


def prepare(source: SourceFile, sha256: str, size: int, schemas: dict) -> PreparedFile:
    """Read, understand and index one source file (runs in a worker process)."""
    now = datetime.now(UTC)
    container, compression, records = read_records(source)
    rows, outcome = index_file(source, sha256, records, now)
    outcome.container = container
    return PreparedFile(outcome, list(rows.tables(schemas)), {
        "path": source.path, "sha256": sha256, "size": size, "container": container,
        "compression": compression, "records": outcome.records, "quarantined": outcome.quarantined,
        "recognised": outcome.recognised, "ingested_at": now,
    })


INGEST_MEMORY_MB = int(os.environ.get("ARCHIVER_INGEST_MEMORY_MB") or 256)
"""DuckDB's buffer pool while ingesting, in MiB (it spills to disk beyond): keeps the writer's memory
bounded however large the archive grows. A commit group with larger records raises it for that group."""

POOL_MIN_BYTES = 4 * 2**20
"""Below this much input, starting worker processes costs more than it saves."""


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def _prepared(work: list[tuple], workers: int, admit: Callable[[tuple], bool]) -> Iterator[PreparedFile]:
    """Prepared files in input order; parsing runs in `workers` processes, a bounded window ahead.
    `admit` is asked just before a file is prepared (it claims the file on a lake of many writers)."""
    admitted = (item for item in work if admit(item))
    if workers <= 1 or len(work) < 2 or sum(size for _, _, size, _ in work) < POOL_MIN_BYTES:
        for item in admitted:
            yield prepare(*item)
        return
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        window: deque = deque()
        for item in admitted:
            window.append(pool.submit(prepare, *item))
            if len(window) > workers * 2:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


def ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str],
    on_file: Callable[[FileOutcome], None] | None = None,
    workers: int | None = None,
    claims: Claims | None = None,
) -> IngestSummary:
    """Ingest sources: unchanged files are skipped by SHA-256, the rest parsed (in `workers`
    processes when there is enough input) and written by this process, each file atomically.

    With `claims` (a lake that several writers share), each file is claimed before it is prepared;
    a file another writer holds is skipped and reported in `claimed_elsewhere`.

    Worker processes are started with the forkserver method, so a script calling this with
    workers > 1 needs the usual `if __name__ == "__main__":` guard.
    """
    summary = IngestSummary()
    _limit_memory(con, 0)
    try:
        _ingest(con, paths, on_file, workers, claims, summary)
    finally:
        if claims is not None:
            claims.release()
            summary.claims_taken_over = list(claims.taken_over)
    _count_index(con, summary)
    return summary


def _ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str], on_file: Callable | None, workers: int | None,
            claims: Claims | None, summary: IngestSummary) -> None:
    schemas = arrow_schemas(con)
    listed: dict[tuple[str, str], tuple] = {}
    for source in expand(paths):
        sha256, size = source.fingerprint()
        listed.setdefault((source.path, sha256), (source, sha256, size, schemas))
    known = _known(con, list(listed))
    work = []
    for key, item in listed.items():
        if key in known:
            records, container = known[key]
            _tally(summary, FileOutcome(key[0], container, records=records, unchanged=True), on_file)
        else:
            work.append(item)

    def admit(item: tuple) -> bool:
        holder = claims.take(item[0].path, item[1]) if claims is not None else None
        if holder is not None:
            _tally(summary, FileOutcome(item[0].path, elsewhere=holder.describe()), on_file)
        return holder is None

    group: list[PreparedFile] = []
    for prepared in _prepared(work, workers or 1, admit):
        group.append(prepared)
        if sum(p.outcome.records for p in group) >= GROUP_RECORDS:
            _commit(con, group, summary, on_file, claims)
    _commit(con, group, summary, on_file, claims)


def _known(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple]:
    """(records, container) of the listed (path, sha256) file versions stored already, in one query."""
    if not keys:
        return {}
    rows = con.execute(
        "SELECT path, sha256, any_value(records), any_value(container) FROM sources "
        "WHERE list_contains(?, path) GROUP BY path, sha256", [sorted({path for path, _ in keys})]).fetchall()
    return {(path, sha256): (records, container) for path, sha256, records, container in rows}


GROUP_RECORDS = 20_000
"""Files are committed together until they hold this many records (a file is never split)."""


def _commit(con: duckdb.DuckDBPyConnection, group: list[PreparedFile], summary: IngestSummary,
            on_file: Callable | None, claims: Claims | None = None) -> None:
    if claims is not None:
        for prepared in [p for p in group if not claims.confirm(p.source_row["path"], p.source_row["sha256"])]:
            group.remove(prepared)
            _tally(summary, FileOutcome(prepared.outcome.path, elsewhere="its claim was taken over by another "
                                        "writer while this one prepared it"), on_file)
    if not group:
        return

    _limit_memory(con, sum(table.nbytes for prepared in group for _, table in prepared.tables))

    def retried(_exc: Exception) -> None:
        summary.commit_retries += 1

    for prepared, new in zip(group, write_files(con, group, on_retry=retried)):
        if new is None:
            prepared.outcome = FileOutcome(prepared.outcome.path, elsewhere="already stored by another writer")
        else:
            prepared.outcome.new_records = new
            if claims is not None:
                claims.done(prepared.source_row["path"], prepared.source_row["sha256"])
        _tally(summary, prepared.outcome, on_file)
    group.clear()


def _limit_memory(con: duckdb.DuckDBPyConnection, batch_bytes: int) -> None:
    """The buffer pool: the base limit, or three times what the next commit loads if that is more."""
    con.execute(f"SET memory_limit = '{max(INGEST_MEMORY_MB, 3 * batch_bytes // 2**20)}MB'")


def _tally(summary: IngestSummary, outcome: FileOutcome, on_file: Callable | None) -> None:
    summary.files += 1
    if outcome.elsewhere:
        summary.claimed_elsewhere.append(f"{outcome.path}: {outcome.elsewhere}")
        if on_file:
            on_file(outcome)
        return
    summary.records += outcome.records
    summary.quarantined += outcome.quarantined
    summary.problems += outcome.problems
    if outcome.unchanged:
        summary.files_unchanged += 1
        summary.duplicates_skipped += outcome.records
    else:
        summary.duplicates_skipped += outcome.records - outcome.new_records
        if outcome.recognised == 0:
            summary.unrecognised_files.append(outcome.path)
    if on_file:
        on_file(outcome)


def _count_index(con: duckdb.DuckDBPyConnection, summary: IngestSummary) -> None:
    """Totals of the archive's index after the run."""
    (summary.tasks, summary.results, summary.copies, summary.parts, summary.citations, summary.claims,
     summary.agent_cards, summary.error_responses) = con.execute("""
        SELECT (SELECT count(DISTINCT task_id) FROM results WHERE kind = 'task'),
               (SELECT count(DISTINCT result_key) FROM results),
               (SELECT count(*) FROM results),
               (SELECT count(*) FROM parts),
               (SELECT count(*) FROM citations),
               (SELECT count(*) FROM claims),
               (SELECT count(*) FROM agent_cards),
               (SELECT count(*) FROM rpc_errors)
    """).fetchone()
