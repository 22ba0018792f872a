"""Ingest: read containers into records, understand A2A, apply Citations v1, load the index.

One source file at a time, each committed atomically; unchanged files are
skipped by their SHA-256, changed or grown ones add only their new records.
"""
from __future__ import annotations

import fnmatch
import glob
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import duckdb

from .load.rows import arrow_schemas
from .load.writer import PENDING_BYTES, write_files
from .prepare import FileOutcome, PreparedFile, prepare
from .read.containers import SourceFile
from .store.claims import Claims
from .store.params import STRINGS, strings

STDIN = "<stdin>"


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


INGEST_MEMORY_MB = int(os.environ.get("ARCHIVER_INGEST_MEMORY_MB") or 256)
"""DuckDB's buffer pool while ingesting, in MiB (it spills to disk beyond): keeps the writer's memory
bounded however large the archive grows. A commit group with larger records raises it for that group."""

POOL_MIN_BYTES = 4 * 2**20
"""Below this much input, starting worker processes costs more than it saves."""


WINDOW_BYTES = 8 * 2**20
"""Input the workers may prepare ahead of the writer (at least two files each): enough to keep them busy
while the writer commits a group, little enough that waiting results stay small."""


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
        ahead = 0
        for item in admitted:
            window.append((pool.submit(prepare, *item), item[2]))
            ahead += item[2]
            while len(window) > workers * 2 and ahead > WINDOW_BYTES:
                future, size = window.popleft()
                ahead -= size
                yield future.result()
        while window:
            yield window.popleft()[0].result()


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
        with _writer_settings(con):
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
        f"WHERE list_contains({STRINGS}, path) GROUP BY path, sha256", [strings(sorted({path for path, _ in keys}))]
    ).fetchall()
    return {(path, sha256): (records, container) for path, sha256, records, container in rows}


GROUP_RECORDS = 20_000
"""Files are committed together until they hold this many records (a file is never split)."""


def _commit(con: duckdb.DuckDBPyConnection, group: list[PreparedFile], summary: IngestSummary,
            on_file: Callable | None, claims: Claims | None = None) -> None:
    if claims is not None:
        for prepared in [p for p in group if not claims.confirm(p.source_row["path"], p.source_row["sha256"])]:
            group.remove(prepared)
            prepared.discard()
            _tally(summary, FileOutcome(prepared.outcome.path, elsewhere="its claim was taken over by another "
                                        "writer while this one prepared it"), on_file)
    if not group:
        return

    _limit_memory(con, max(PENDING_BYTES, *(prepared.largest for prepared in group)))

    def retried(_exc: Exception) -> None:
        summary.commit_retries += 1

    try:
        written = write_files(con, group, on_retry=retried)
    finally:
        for prepared in group:
            prepared.discard()
    for prepared, new in zip(group, written):
        if new is None:
            prepared.outcome = FileOutcome(prepared.outcome.path, elsewhere="already stored by another writer")
        else:
            prepared.outcome.new_records = new
            if claims is not None:
                claims.done(prepared.source_row["path"], prepared.source_row["sha256"])
        _tally(summary, prepared.outcome, on_file)
    group.clear()


WRITER_SETTINGS = {"threads": "1", "checkpoint_threshold": "1GB"}
"""DuckDB settings while ingesting. The writer shares the machine's cores with the parsing workers, and
DuckDB's threads cost more CPU than they save on these inserts. A checkpoint costs work in proportion to
the archive's size besides compressing the new rows, so frequent checkpoints make the writer's time grow with
the square of the input (at the default 16 MB of WAL one ran after nearly every commit group). Writing
585,000 records cost 47 s of CPU checkpointing every 64 MB, 31 s every 1 GB. The WAL on disk grows to 1 GB;
memory stays capped by memory_limit."""


@contextmanager
def _writer_settings(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    before = {name: con.execute("SELECT current_setting(?)", [name]).fetchone()[0] for name in WRITER_SETTINGS}
    for name, value in WRITER_SETTINGS.items():
        con.execute(f"SET {name} = '{value}'")
    try:
        yield
    finally:
        for name, value in before.items():
            con.execute(f"SET {name} = '{value}'")


def _limit_memory(con: duckdb.DuckDBPyConnection, batch_bytes: int) -> None:
    """The buffer pool: the base limit, or three times the largest batch the next commit loads if that is more."""
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
