"""Ingest: read containers into records, understand A2A, apply Citations v1, load the index.

One source file at a time, each committed atomically; unchanged files are
skipped by their SHA-256, changed or grown ones add only their new records.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Protocol

import duckdb

from .defaults import FOLLOW_INTERVAL_SECONDS
from .errors import InputError, UsageError
from .interrupts import Interrupted, as_interrupted, stop_if_received
from .load import spool, versions
from .load.schemas import arrow_schemas
from .load.writer import PENDING_BYTES, alias_row, write_aliases, write_files
from .prepare import FileOutcome, PreparedFile, prepare
from .read import stores
from .read.containers import SourceFile, shown
from .read.segments import is_open
from .read.version import SourceVersion
from .store.backend import archive_files
from .store.connection import ArchiveBusyError
from .store.leases import Holder, Leases
from .store.views import STAT_QUERIES
from .workers import Gauge, worker_pool

STDIN = "<stdin>"


@dataclass
class IngestSummary:
    files: int = 0
    files_unchanged: int = 0
    files_aliased: int = 0
    """Files holding bytes the archive stores already at another path: recorded as aliases, nothing more."""
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
    not_stored: list[str] = field(default_factory=list)
    """Files left unstored because another live writer of the lake holds them (also in `claimed_elsewhere`)."""
    leases_taken_over: list[str] = field(default_factory=list)
    commit_retries: int = 0
    archive_files_skipped: int = 0
    """Paths that reached the archive's own files (its database, .wal, a lake's Parquet files): never read."""
    folders_unreadable: list[str] = field(default_factory=list)
    """Folders found in a walk that could not be listed (no permission): their files were not read."""

    def as_dict(self) -> dict:
        return asdict(self)

    def count_retry(self, _exc: Exception) -> None:
        """Hears of a commit retried because another writer's got in the way."""
        self.commit_retries += 1

    @property
    def found_nothing(self) -> bool:
        """No file at all, or none but files in which no A2A object was recognised: nothing to archive."""
        return self.files == 0 or len(self.unrecognised_files) == self.files

    @property
    def exit_code(self) -> int:
        """1 when a record was quarantined, nothing was found to archive, or files were left unstored
        because another writer of the lake was ingesting them; else 0."""
        return 1 if self.quarantined or self.found_nothing or self.not_stored else 0


IGNORE_FILE = ".archiverignore"


def expand(
    paths: Iterable[str], tables: Sequence[str] = (), unreadable: list[str] | None = None
) -> Iterator[SourceFile]:
    """Files, directories (recursively, in name order), globs, "-" for standard input, and live task
    stores (`postgresql://...`, `mysql://...`: a source for each of `tables`, else for each task table).

    In a directory walk, hidden files are passed over, and so is whatever a `.archiverignore` file (one
    glob per line, `dir/` for a folder) names beside or above it in the walk. A file named explicitly is
    always read, except a spool segment still being written (`*.open`): no ingest reads one. A folder
    the walk cannot list is added to `unreadable`; one named explicitly that cannot be listed is an
    `InputError` (a file that cannot be read is quarantined, named or not).
    """
    for given in paths:
        if given == "-":
            yield SourceFile(STDIN, sys.stdin.buffer.read())
            continue
        if stores.is_store_url(given):
            yield from stores.snapshot(given, tables)
            continue
        matches = sorted(glob.glob(given, recursive=True)) if glob.has_magic(given) else [given]
        if not matches:
            raise InputError(f"{shown(given)}: no such file or directory")
        for match in matches:
            if os.path.isdir(match):
                yield from _walk(match, unreadable, named=match == given)
            elif is_open(match):  # a spool segment still being written: never read
                continue
            elif os.path.lexists(match):  # a dangling symlink too: quarantined as unreadable, as in a walk
                yield SourceFile.on_disk(match)
            else:
                raise InputError(f"{shown(match)}: {_missing(match)}")


def _missing(path: str) -> str:
    """Why `path` cannot be seen: a folder on its way that may not be searched, or nothing there."""
    try:
        os.lstat(path)
    except PermissionError:
        return "permission denied: a folder on its path cannot be searched"
    except OSError:
        pass
    return "no such file or directory"


def _walk(top: str, unreadable: list[str] | None = None, named: bool = False) -> Iterator[SourceFile]:
    """The files under `top`, each folder's `.archiverignore` rules applying beneath it; the folders it cannot
    list are added to `unreadable` (`top` itself, when `named` on the command line, is an `InputError`). A
    folder's rules are its parent's and its own (looking through every folder seen so far made the walk
    quadratic: 11% of ingesting 11,100 small files in 300 folders)."""
    unreadable = [] if unreadable is None else unreadable

    def unlisted(exc: OSError) -> None:
        if named and exc.filename == top:
            raise InputError(f"{shown(top)}: {(exc.strerror or str(exc)).lower()}: cannot list the folder") from None
        unreadable.append(f"{shown(os.path.abspath(exc.filename))}: {(exc.strerror or str(exc)).lower()}")

    rules: dict[str, list[tuple[str, str]]] = {}
    for root, dirs, files in os.walk(top, onerror=unlisted, followlinks=False):
        inherited = rules.get(os.path.dirname(root), [])  # os.walk names a child folder os.path.join(root, name)
        own = [(root, pattern) for pattern in _ignore_rules(root)]
        inherited = rules[root.rstrip(os.sep) or root] = inherited + own if own else inherited
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not _ignored(os.path.join(root, d), inherited, folder=True)
        )
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.startswith(".") and not is_open(name) and not _ignored(path, inherited, folder=False):
                yield SourceFile.on_disk(path)


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
"""Below this much input, preparing in threads beside the writer saves nothing."""


WINDOW_BYTES = 8 * 2**20
"""Input the workers may prepare ahead of the writer (at least two files each): enough to keep them busy
while the writer commits a group, little enough that waiting results stay small."""


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


CHUNK_BYTES = 512 * 2**10
CHUNK_FILES = 256
"""Consecutive small files are prepared together, up to this many bytes or files: one call of a worker, one
Arrow batch per table for all of them (per file, the calls and the batches cost more than the reading)."""


def _chunks(work: list[tuple], admit: Callable[[tuple], bool]) -> Iterator[list[tuple]]:
    """The admitted files of `work` in input order, in chunks to prepare together: consecutive small files
    that extend no stored version, each other file alone."""
    chunk, size = [], 0
    for item in work:
        if not admit(item):
            continue
        version = item[1]
        if version.size >= CHUNK_BYTES or version.extends_here:
            if chunk:
                yield chunk
                chunk, size = [], 0
            yield [item]
            continue
        chunk.append(item)
        size += version.size
        if size >= CHUNK_BYTES or len(chunk) >= CHUNK_FILES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _prepared(
    work: list[tuple], schemas: dict, workers: int, admit: Callable[[tuple], bool], gauge: Gauge
) -> Iterator[list[PreparedFile]]:
    """Prepared files in input order, a chunk at a time; parsing runs in `workers` threads, a bounded
    window ahead, each telling `gauge` how far it has read. `admit` is asked just before a file is prepared
    (it leases the file on a lake of many writers)."""
    chunks = _chunks(work, admit)
    if workers <= 1 or len(work) < 2 or sum(version.size for _, version in work) < POOL_MIN_BYTES:
        with gauge.here():
            for chunk in chunks:
                prepared = prepare(chunk, schemas)
                gauge.taken(0)
                yield prepared
        return
    with worker_pool(workers, gauge) as pool:
        window: deque = deque()
        ahead = 0
        for chunk in chunks:
            size = sum(version.size for _, version in chunk)
            window.append((pool.submit(prepare, chunk, schemas), size))
            ahead += size
            while len(window) > workers * 2 and ahead > WINDOW_BYTES:
                future, size = window.popleft()
                ahead -= size
                yield future.result()
        while window:
            yield window.popleft()[0].result()


class Watcher(Protocol):
    """What follows an ingest as it reads (`archiver.progress.Progress`): the files and bytes it will read,
    then each file as its records are read (in input order, before the file is committed)."""

    def planned(self, files: int, size: int, reading: Callable[[], tuple[int, int]]) -> None:
        """`reading()`: the bytes and records read so far of the files being prepared (not yet `read`)."""

    def read(self, path: str, size: int, records: int) -> None: ...


def ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str],
    on_file: Callable[[FileOutcome], None] | None = None,
    workers: int | None = None,
    leases: Leases | None = None,
    wait_for_writers: bool = False,
    tables: Sequence[str] = (),
    watcher: Watcher | None = None,
) -> IngestSummary:
    """Ingest sources: unchanged files are skipped by SHA-256, the rest parsed (in `workers`
    threads when there is enough input) and written by the calling thread, each file atomically.

    With `leases` (a lake that several writers share), each file is leased before it is prepared; a file
    another writer stored is skipped and reported in `claimed_elsewhere`, and so is one another live writer
    is ingesting, which is also listed in `not_stored`, unless `wait_for_writers`: then this run waits
    until that writer commits it, or dies and this run takes it over.

    A live task store's table (see `read.stores`; `tables` names the ones to read) continues the
    lineage at its name whatever changed: each run stores the rows it has not stored before, and its
    index rows replace those of the run before.

    `on_file` is called as each file is done (committed, unchanged, an alias or another writer's), and
    `watcher` told of the reading (for progress).
    """
    paths = list(paths)
    if tables and not any(stores.is_store_url(path) for path in paths):
        raise UsageError("names tables of a task store, and no postgresql:// or mysql:// URL was given", "--table")
    summary = IngestSummary()
    spool.sweep()  # what killed ingests left in the temporary folder
    _limit_memory(con, 0)
    try:
        with _writer_settings(con):
            _ingest(con, paths, on_file, workers, leases, summary, wait_for_writers, tables, watcher)
        stop_if_received()
    except BaseException as exc:
        stopped = as_interrupted(exc)
        if isinstance(stopped, Interrupted):
            stopped.progress = _committed(summary)
            _skip_checkpoint(con)
            raise stopped from None
        raise
    finally:
        if leases is not None:
            leases.release()
            summary.leases_taken_over = list(leases.taken_over)
    _count_index(con, summary)
    return summary


def _skip_checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Leave the WAL for the next open to replay: checkpointing it as the archive closes takes seconds
    (2.1 s after 56,000 records), and an interrupted run has to stop now."""
    with suppress(duckdb.Error):
        con.execute("PRAGMA disable_checkpoint_on_shutdown")


def _committed(summary: IngestSummary) -> str:
    """What an interrupted run had committed, for the one line it ends with."""
    stored = summary.files - summary.files_unchanged - summary.files_aliased - len(summary.claimed_elsewhere)
    return (
        f"committed {stored} files ({summary.records - summary.duplicates_skipped} new records) before "
        "stopping; the files in flight were not stored (run the same command again to finish)"
    )


def _ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str],
    on_file: Callable | None,
    workers: int | None,
    leases: Leases | None,
    summary: IngestSummary,
    wait_for_writers: bool,
    tables: Sequence[str] = (),
    watcher: Watcher | None = None,
) -> None:
    schemas = arrow_schemas(con)
    own = archive_files(con)
    sources = []
    for source in expand(paths, tables, summary.folders_unreadable):
        if source.data is None and own.holds(source.fs_path):
            summary.archive_files_skipped += 1
        else:
            sources.append(source)
    listed, aliases, stored = _versions(con, sources, summary, on_file)
    if leases is not None:  # a writer killed between its commit and marking its leases left them held
        leases.settle(stored)
    work = listed
    gauge = Gauge(workers or 1)
    if watcher is not None:
        watcher.planned(len(work), sum(version.size for _, version in work), gauge.total)

    held: dict[str, tuple[tuple, Holder]] = {}

    def admit(item: tuple) -> bool:
        holder = leases.take(item[0].path, item[1].sha256) if leases is not None else None
        if holder is not None and holder.committed:  # another writer stored these bytes: an alias here
            aliases.append((item[0], item[1].sha256, item[1].size))
        elif holder is not None:
            held[item[0].path] = (item, holder)
        return holder is None

    _store(con, work, schemas, workers or 1, admit, summary, on_file, leases, gauge, watcher)
    delay = WRITERS_POLL_SECONDS
    while held and wait_for_writers:
        time.sleep(delay)
        delay = min(2 * delay, WRITERS_POLL_MAX_SECONDS)
        again = [item for item, _holder in held.values()]
        held.clear()
        _store(con, again, schemas, workers or 1, admit, summary, on_file, leases, gauge, watcher)
    for path, (_item, holder) in held.items():
        summary.not_stored.append(f"{path}: {holder.describe()}")
        _tally(summary, FileOutcome(path, elsewhere=holder.describe()), on_file)
    _record_aliases(con, aliases, summary, on_file)


WRITERS_POLL_SECONDS = 0.5
WRITERS_POLL_MAX_SECONDS = 5.0
"""How often a run that waits for other writers looks again at the files they hold."""


def _store(
    con: duckdb.DuckDBPyConnection,
    work: list[tuple],
    schemas: dict,
    workers: int,
    admit: Callable[[tuple], bool],
    summary: IngestSummary,
    on_file: Callable | None,
    leases: Leases | None,
    gauge: Gauge,
    watcher: Watcher | None = None,
) -> None:
    """Prepare and commit the admitted files of `work`, in commit groups (files prepared together are
    committed together)."""
    group: list[PreparedFile] = []
    grouped = size = 0  # records and bytes of `group`, kept as it grows (summed for each file, it was quadratic)
    try:
        with closing(_prepared(work, schemas, workers, admit, gauge)) as chunks:  # closed on an error: workers stopped
            for chunk in chunks:
                stop_if_received()
                for prepared in chunk:
                    if watcher is not None:
                        watcher.read(prepared.outcome.path, prepared.version.size, prepared.outcome.records)
                    group.append(prepared)
                    grouped += prepared.outcome.records
                    size += prepared.version.size
                if grouped >= GROUP_RECORDS or size >= GROUP_BYTES:
                    _commit(con, group, summary, on_file, leases)
                    grouped = sum(p.outcome.records for p in group)  # what the commit left: nothing, as a rule
                    size = sum(p.version.size for p in group)
        _commit(con, group, summary, on_file, leases)
    except BaseException:
        _tally_landed(con, group, summary, on_file, leases)
        raise


def _tally_landed(
    con: duckdb.DuckDBPyConnection,
    group: list[PreparedFile],
    summary: IngestSummary,
    on_file: Callable | None,
    leases: Leases | None,
) -> None:
    """Count the files of a commit cut short that landed all the same: an interrupt that arrives as COMMIT
    finishes is raised after it, and what the run says it committed must be what the archive holds."""
    keys = [(p.source_row["path"], p.source_row["sha256"]) for p in group]
    try:
        landed = versions.recorded(con, keys)
    except duckdb.Error:
        return
    for prepared in [p for p, key in zip(group, keys, strict=False) if key in landed]:
        prepared.outcome.new_records = prepared.outcome.records
        if leases is not None:
            leases.done(prepared.source_row["sha256"])
        _tally(summary, prepared.outcome, on_file)


def _versions(
    con: duckdb.DuckDBPyConnection, sources: list[SourceFile], summary: IngestSummary, on_file: Callable | None
) -> tuple[list[tuple[SourceFile, SourceVersion]], list[tuple], list[str]]:
    """Sort the listed files: versions recorded already (tallied as unchanged; their contents are
    returned third), bytes stored already at another path or listed twice (aliases, recorded after the
    run's commits), and versions to store. An empty or unreadable file has no content to count twice, so
    it is never an alias."""
    latest = versions.latest_at(con, [source.path for source in sources])
    listed: dict[tuple[str, str], tuple[SourceFile, str, int, str | None]] = {}
    for source in sources:
        before = latest.get(source.path) if source.path != STDIN else None
        sha256, size, head = source.fingerprint(before.size if before else None)
        if source.store is not None:  # a store's next snapshot continues its lineage, whatever changed
            head = before.sha256 if before else None
        listed.setdefault((source.path, sha256), (source, sha256, size, head))
    known = versions.recorded(con, list(listed))
    contents = versions.stored_contents(con, [sha256 for _, sha256 in listed])
    work, aliases, stored, first_paths = [], [], [], {}
    for key, (source, sha256, size, head) in listed.items():
        if key in known:
            stored.append(sha256)
            records, container = known[key]
            _tally(summary, FileOutcome(key[0], container, records=records, unchanged=True), on_file)
        elif size and (sha256 in contents or sha256 in first_paths):
            aliases.append((source, sha256, size))
        else:
            first_paths.setdefault(sha256, source.path)
            work.append(
                (
                    source,
                    versions.new_version(
                        source.path, sha256, size, head, latest.get(source.path), may_extend=source.path != STDIN
                    ),
                )
            )
    return _rotated(con, work), aliases, stored


def _rotated(
    con: duckdb.DuckDBPyConnection, work: list[tuple[SourceFile, SourceVersion]]
) -> list[tuple[SourceFile, SourceVersion]]:
    """Each new lineage that begins with the bytes of the latest version at a sibling path whose name its
    own name extends (`app.log` rotated to `app.log.1` after it grew) continues that version instead, as a
    log that grew at its own path does: the rotated file's results are not counted beside the earlier
    version's. Only files with such a sibling are read again, to hash their first bytes."""
    starts = [
        (n, source) for n, (source, version) in enumerate(work) if version.replaces is None and _may_rotate(source)
    ]
    siblings = versions.rotated_from(con, [source.path for _, source in starts]) if starts else {}
    for n, source in starts:
        version = work[n][1]
        for earlier in siblings.get(source.path, []):
            if earlier.size < version.size and source.fingerprint(earlier.size)[2] == earlier.sha256:
                work[n] = (source, versions.continued(version, earlier))
                break
    return work


def _may_rotate(source: SourceFile) -> bool:
    return source.path != STDIN and source.store is None and source.data is None and not source.unreadable


def _record_aliases(
    con: duckdb.DuckDBPyConnection, aliases: list[tuple], summary: IngestSummary, on_file: Callable | None
) -> None:
    """Record each path whose bytes the archive holds at another path; nothing else is stored for it."""
    contents = versions.stored_contents(con, [sha256 for _, sha256, _ in aliases])
    rows, aliased = [], []
    for source, sha256, size in aliases:
        if sha256 not in contents:
            _tally(
                summary,
                FileOutcome(
                    source.path,
                    elsewhere="the same bytes were listed at another path, which was not stored in this run",
                ),
                on_file,
            )
            continue
        stored = contents[sha256]
        if any(row["path"] == source.path for row in stored):  # another writer stored it here first
            _tally(summary, FileOutcome(source.path, elsewhere="already stored by another writer"), on_file)
            continue
        first = stored[0]
        rows.append(
            alias_row({**first, "path": source.path, "size": size, "ingested_at": datetime.now(UTC)}, first["path"])
        )
        aliased.append(
            FileOutcome(source.path, first["container"], records=first["records"] or 0, alias_of=first["path"])
        )
    write_aliases(con, rows, summary.count_retry)
    for outcome in aliased:
        _tally(summary, outcome, on_file)


GROUP_RECORDS = 20_000
GROUP_BYTES = 16 * 2**20
"""Files are committed together until they hold this many records or bytes (a file is never split): the
small files of a group wait in memory for its commit (3,000 files of 150 kB took 1.9 GiB without the bound)."""


def _commit(
    con: duckdb.DuckDBPyConnection,
    group: list[PreparedFile],
    summary: IngestSummary,
    on_file: Callable | None,
    leases: Leases | None = None,
) -> None:
    if leases is not None:
        for prepared in [p for p in group if not leases.confirm(p.source_row["sha256"])]:
            group.remove(prepared)
            prepared.discard()
            why = "its lease was taken over by another writer while this one prepared it"
            summary.not_stored.append(f"{prepared.outcome.path}: {why}")
            _tally(summary, FileOutcome(prepared.outcome.path, elsewhere=why), on_file)
    if not group:
        return

    _limit_memory(con, max(PENDING_BYTES, *(prepared.largest for prepared in group)))

    try:
        written = write_files(con, group, on_retry=summary.count_retry)
    finally:
        for prepared in group:
            prepared.discard()
    tallied = 0
    try:
        for prepared, new in zip(group, written, strict=False):
            path = prepared.outcome.path
            if new == path:
                prepared.outcome = FileOutcome(path, elsewhere="already stored by another writer")
            elif isinstance(new, str):
                prepared.outcome = FileOutcome(
                    path, prepared.outcome.container, records=prepared.outcome.records, alias_of=new
                )
            else:
                prepared.outcome.new_records = new
            if leases is not None and new != path:
                leases.done(prepared.source_row["sha256"])
            _tally(summary, prepared.outcome, on_file)
            tallied += 1
    finally:
        del group[:tallied]  # what is left, if anything, `_tally_landed` looks for
    stop_if_received()


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
    if outcome.unchanged or outcome.alias_of:
        summary.files_unchanged += outcome.unchanged
        summary.files_aliased += bool(outcome.alias_of)
        summary.duplicates_skipped += outcome.records
    else:
        summary.duplicates_skipped += outcome.records - outcome.new_records
        if outcome.recognised == 0:
            summary.unrecognised_files.append(outcome.path)
    if on_file:
        on_file(outcome)


def _count_index(con: duckdb.DuckDBPyConnection, summary: IngestSummary) -> None:
    """Totals of the archive's index after the run, counted as `stats` counts them."""
    totals = con.execute("SELECT " + ", ".join(f"({STAT_QUERIES[name]})" for name in _TOTALS)).fetchone()
    for name, value in zip(_TOTALS, totals, strict=True):
        setattr(summary, name, value)


FOLLOW_INTERVAL = FOLLOW_INTERVAL_SECONDS
"""Seconds between two looks at a followed spool directory."""

_TOTALS = ("tasks", "results", "copies", "parts", "citations", "claims", "agent_cards", "error_responses")
"""Summary fields that count the archive after a run (the last pass's are the archive's), not the run's work."""


WAIT_ON: tuple[type[Exception], ...] = (ArchiveBusyError,)
"""The errors that mean "the archive cannot be written now" (readers, or another writer, hold it): a
follower's segments wait for its next try. Any other error stops it, said once (an archive of a newer
archiver, a path that cannot be written), rather than being tried again for ever."""


class Follower:
    """The one spool follower (`archiver record --spool DIR`'s closed segments into an archive), driven by
    `follow` looking at the spool every few seconds (`archiver ingest --follow`) and by the proxy telling it
    of each segment it closes (`archiver record --db`): it finds segments as `ingest` walks a folder (no
    `*.open` segment, nothing `.archiverignore` names), and stores them or lets them wait (`step`)."""

    def __init__(
        self,
        store: Callable[[list[str]], IngestSummary],
        on_pass: Callable[[IngestSummary], None] | None = None,
        on_wait: Callable[[Exception], None] | None = None,
    ) -> None:
        self.store, self.on_pass, self.on_wait = store, on_pass, on_wait
        self.total = IngestSummary()
        self.seen: dict[str, tuple[int, int]] = {}

    def fresh(self, directory: str) -> list[str]:
        """The closed segments of `directory` not stored before, or changed since (by size and modification
        time), in name order."""
        return [source.fs_path for source in _walk(directory) if self.seen.get(source.fs_path, ()) != _mark(source)]

    def step(self, paths: list[str]) -> bool:
        """Store `paths`, or let them wait: True when they were stored (each file committed whole); False when
        the archive could not be written now (`WAIT_ON`: `on_wait` hears why; without it, it is raised)."""
        marks = {path: _mark_of(path) for path in paths}
        try:
            summary = self.store(paths)
        except WAIT_ON as busy:
            if self.on_wait is None:
                raise
            self.on_wait(busy)
            return False
        except Interrupted as stopped:
            stopped.progress = (
                f"{_followed(self.total)}; then {stopped.progress}" if self.total.files else stopped.progress
            )
            raise
        self.seen.update(marks)
        _add(self.total, summary)
        if self.on_pass is not None:
            self.on_pass(summary)
        return True


def _mark(source: SourceFile) -> tuple[int, int] | tuple[()]:
    return _mark_of(source.fs_path)


def _mark_of(path: str) -> tuple[int, int] | tuple[()]:
    """A file's size and modification time; () when it is gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return (stat.st_size, stat.st_mtime_ns)


def follow(
    directory: str,
    store: Callable[[list[str]], IngestSummary],
    interval: float | None = None,
    on_pass: Callable[[IngestSummary], None] | None = None,
    until: Callable[[], bool] | None = None,
    on_busy: Callable[[Exception], None] | None = None,
) -> IngestSummary:
    """Ingest the closed segments of a spool directory (`archiver record --spool DIR`) as they appear, until
    interrupted (SIGINT or SIGTERM, raised as `Interrupted` between commits) or `until()` is true after a
    pass; the summary of everything it stored.

    Every `interval` seconds (default `FOLLOW_INTERVAL`) the `Follower` looks at the directory; the files not
    seen in an earlier pass, or changed since, are handed to `store` (an ingest into the archive: each file
    committed whole), and `on_pass` hears the pass's summary. A closed segment is immutable, so a file stored
    once is not read again; a file that was stored before this run began is recognised by its bytes
    (unchanged) and skipped. When `store` finds the archive busy (`WAIT_ON`: readers hold a file archive),
    `on_busy` hears it and the files wait for the next pass.
    """
    if not os.path.isdir(directory):
        why = "not a spool directory" if os.path.exists(directory) else "no such directory"
        raise InputError(f"{shown(directory)}: {why}")
    follower = Follower(store, on_pass, on_busy)
    interval = FOLLOW_INTERVAL if interval is None else interval
    while True:
        fresh = follower.fresh(directory)
        if fresh:
            follower.step(fresh)
        if until is not None and until():
            return follower.total
        _pause(interval, follower.total)


def _pause(seconds: float, total: IngestSummary) -> None:
    """Wait for the next pass; a signal meanwhile ends the follow, saying what it stored."""
    try:
        time.sleep(seconds)
        stop_if_received()
    except Interrupted as stopped:
        stopped.progress = _followed(total)
        raise


def _followed(total: IngestSummary) -> str:
    stored = total.files - total.files_unchanged - total.files_aliased - len(total.claimed_elsewhere)
    return f"committed {stored} files ({total.records - total.duplicates_skipped} new records) while following"


def _add(total: IngestSummary, summary: IngestSummary) -> None:
    for name, value in summary.as_dict().items():
        if name in _TOTALS:
            setattr(total, name, value)
        else:
            setattr(total, name, getattr(total, name) + value)
