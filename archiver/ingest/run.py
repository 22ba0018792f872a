"""One ingest run: list the sources, sort out what the archive holds already, prepare the rest ahead of the
writer and commit them in groups, each file atomically (`ingest`, driving a `Run`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime
from typing import Protocol

import duckdb

from ..errors import UsageError
from ..interrupts import Interrupted, as_interrupted, stop_if_received
from ..load import spool, versions
from ..load.schemas import arrow_schemas
from ..load.writer import PENDING_BYTES, alias_row, write_aliases, write_files
from ..prepare import FileOutcome, PreparedFile
from ..read import stores
from ..read.containers import SourceFile
from ..read.version import SourceVersion
from ..store import counts, kept
from ..store.backend import archive_files
from ..store.connection import CommitConflictError
from ..store.leases import Holder, Leases
from ..workers import Gauge
from .paths import STDIN, expand
from .pipeline import prepared
from .summary import INDEX_TOTALS, IngestSummary

INGEST_MEMORY_MB = int(os.environ.get("ARCHIVER_INGEST_MEMORY_MB") or 256)
"""DuckDB's buffer pool while ingesting, in MiB (it spills to disk beyond): keeps the writer's memory
bounded however large the archive grows. A commit group with larger records raises it for that group."""

GROUP_RECORDS = 20_000
GROUP_BYTES = 16 * 2**20
"""Files are committed together until they hold this many records or bytes (a file is never split): the
small files of a group wait in memory for its commit (3,000 files of 150 kB took 1.9 GiB without the bound)."""

WRITERS_POLL_SECONDS = 0.5
WRITERS_POLL_MAX_SECONDS = 5.0
"""How often a run that waits for other writers looks again at the files they hold."""

WRITER_SETTINGS = {"threads": "1", "checkpoint_threshold": "1GB"}
"""DuckDB settings while ingesting. The writer shares the machine's cores with the parsing workers, and
DuckDB's threads cost more CPU than they save on these inserts. A checkpoint costs work in proportion to
the archive's size besides compressing the new rows, so frequent checkpoints make the writer's time grow with
the square of the input (at the default 16 MB of WAL one ran after nearly every commit group). Writing
585,000 records cost 47 s of CPU checkpointing every 64 MB, 31 s every 1 GB. The WAL on disk grows to 1 GB;
memory stays capped by memory_limit."""

REFRESH_SETTINGS = {"checkpoint_threshold": "1GB"}
"""DuckDB settings while the kept tables are refreshed after the last commit: each batch's transaction wrote more than
the default 16 MB of WAL, so each commit checkpointed (the claim index of 209,000 claims: three checkpoints, 6% of
the ingest's time); the checkpoint comes once, as the archive closes. DuckDB's own threads, which the refresh's joins
and windows use."""


class Watcher(Protocol):
    """What follows an ingest (`archiver.progress.Progress`): the files and bytes it will read, each file as
    its records are read (in input order, before the file is committed), each commit (its files and bytes,
    the step it is at, its end), and what the run does once every file is stored."""

    def planned(self, files: int, size: int, reading: Callable[[], tuple[int, int]]) -> None:
        """`reading()`: the bytes and records read so far of the files being prepared (not yet `read`)."""

    def read(self, path: str, size: int, records: int) -> None: ...

    def committing(self, files: int, size: int) -> None: ...

    def writing(self, step: str) -> None:
        """The step of the commit under way: "writing claims", "the commit"."""

    def committed(self, files: int, size: int) -> None: ...

    def finishing(self, what: str) -> None:
        """What the run does after its last commit ("counting the archive's index")."""


Work = list[tuple[SourceFile, SourceVersion]]
"""Files to store, each with the version it would record."""


def ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str],
    on_file: Callable[[FileOutcome], None] | None = None,
    workers: int | None = None,
    leases: Leases | None = None,
    wait_for_writers: bool = False,
    tables: Sequence[str] = (),
    watcher: Watcher | None = None,
    refreshes: Sequence[Callable[[duckdb.DuckDBPyConnection], object]] = (),
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
    `watcher` told of the reading (for progress). After the last commit the claim index is refreshed
    (`store.kept`), then each of `refreshes` is called: the other kept tables' refreshes (the audit's).
    """
    paths = list(paths)
    if tables and not any(stores.is_store_url(path) for path in paths):
        raise UsageError("names tables of a task store, and no postgresql:// or mysql:// URL was given", "--table")
    run = Run(con, workers or 1, leases, on_file, watcher)
    spool.sweep()  # what killed ingests left in the temporary folder
    _limit_memory(con, 0)
    try:
        with _settings(con, WRITER_SETTINGS):
            run.files(paths, tables, wait_for_writers)
        stop_if_received()
        if watcher is not None:
            watcher.finishing("keeping the claim index, the counts and the audit of the results it touched")
        # another writer's refresh: what stays pending is read as defined
        with suppress(CommitConflictError), _settings(con, REFRESH_SETTINGS):
            kept.refresh(con)  # the claim index's rows of the results this run touched (`store.kept`)
            counts.refresh(con)  # what they add to the archive's counts (`store.counts`)
            for refresh in refreshes:  # the other kept tables' (the audit's, `audit.kept`, given from above)
                refresh(con)
    except BaseException as exc:
        stopped = as_interrupted(exc)
        if isinstance(stopped, Interrupted):
            stopped.progress = run.stopped()
            _skip_checkpoint(con)
            raise stopped from None
        raise
    finally:
        if leases is not None:
            leases.release()
            run.summary.leases_taken_over = list(leases.taken_over)
    if watcher is not None:
        watcher.finishing("counting what the archive holds")
    run.count_index()
    return run.summary


class Run:
    """An ingest under way: the archive's connection, the summary it keeps, whom it tells of each file
    (`on_file`) and of its reading (`watcher`), and the leases of a lake's writer (None for a file)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        workers: int,
        leases: Leases | None,
        on_file: Callable[[FileOutcome], None] | None,
        watcher: Watcher | None,
    ) -> None:
        self.con, self.workers, self.leases, self.on_file, self.watcher = con, workers, leases, on_file, watcher
        self.summary = IngestSummary()
        self.gauge = Gauge(workers)
        self.schemas: dict = {}
        self.held: dict[str, tuple[tuple, Holder]] = {}
        """Files another live writer of the lake is ingesting: left, or waited for."""
        self.aliases: list[tuple] = []
        """Files whose bytes the archive holds (or this run stores) at another path: recorded last."""
        self.planned = 0
        """Files to store, once the run has listed them."""

    def stopped(self) -> str:
        """What an interrupted run committed and what it did not, in one statement."""
        left = self.planned - self.summary.stored
        after = f"; {left} not stored (run the same command again to finish)" if left > 0 else ""
        return self.summary.committed("before stopping", self.planned) + after

    def files(self, paths: list[str], tables: Sequence[str], wait_for_writers: bool) -> None:
        """Store the files `paths` name; those another writer holds are waited for or left (`not_stored`)."""
        self.schemas = arrow_schemas(self.con)
        own = archive_files(self.con)
        sources = []
        for source in expand(paths, tables, self.summary.folders_unreadable):
            if source.data is None and own.holds(source.fs_path):
                self.summary.archive_files_skipped += 1
            else:
                sources.append(source)
        work, stored = self.versions(sources)
        if self.leases is not None:  # a writer killed between its commit and marking its leases left them held
            self.leases.settle(stored)
        self.planned = len(work)
        if self.watcher is not None:
            self.watcher.planned(len(work), sum(version.size for _, version in work), self.gauge.total)
        self.store(work)
        delay = WRITERS_POLL_SECONDS
        while self.held and wait_for_writers:
            time.sleep(delay)
            delay = min(2 * delay, WRITERS_POLL_MAX_SECONDS)
            again = [item for item, _holder in self.held.values()]
            self.held.clear()
            self.store(again)
        for path, (_item, holder) in self.held.items():
            self.summary.not_stored.append(f"{path}: {holder.describe()}")
            self.tally(FileOutcome(path, elsewhere=holder.describe()))
        self.record_aliases()

    def tally(self, outcome: FileOutcome) -> None:
        self.summary.tally(outcome)
        if self.on_file is not None:
            self.on_file(outcome)

    def admit(self, item: tuple) -> bool:
        """Whether to prepare `item` now: always for a file; on a lake, when this writer took its lease."""
        if self.leases is None:
            return True
        holder = self.leases.take(item[0].path, item[1].sha256)
        if holder is not None and holder.committed:  # another writer stored these bytes: an alias here
            self.aliases.append((item[0], item[1].sha256, item[1].size))
        elif holder is not None:
            self.held[item[0].path] = (item, holder)
        return holder is None

    def store(self, work: Work) -> None:
        """Prepare and commit the admitted files of `work`, in commit groups (files prepared together are
        committed together)."""
        group: list[PreparedFile] = []
        grouped = size = 0  # records and bytes of `group`, kept as it grows (summed for each file, it was quadratic)
        try:
            with closing(prepared(work, self.schemas, self.workers, self.admit, self.gauge)) as chunks:
                for chunk in chunks:  # closed on an error: workers stopped
                    stop_if_received()
                    for ready in chunk:
                        if self.watcher is not None:
                            self.watcher.read(ready.outcome.path, ready.version.size, ready.outcome.records)
                        group.append(ready)
                        grouped += ready.outcome.records
                        size += ready.version.size
                    if grouped >= GROUP_RECORDS or size >= GROUP_BYTES:
                        self.commit(group)
                        grouped = sum(p.outcome.records for p in group)  # what the commit left: nothing, as a rule
                        size = sum(p.version.size for p in group)
            self.commit(group)
        except BaseException:
            self.tally_landed(group)
            raise

    def commit(self, group: list[PreparedFile]) -> None:
        """Write the files of `group` in one transaction; those committed are taken out of it (what is left
        after an error, `tally_landed` looks for)."""
        self.drop_lost_leases(group)
        if not group:
            return
        _limit_memory(self.con, max(PENDING_BYTES, *(p.largest for p in group)))
        files, size = len(group), sum(p.version.size for p in group)
        if self.watcher is not None:
            self.watcher.committing(files, size)
        try:
            step = self.watcher.writing if self.watcher is not None else None
            written = write_files(self.con, group, on_retry=self.summary.count_retry, on_step=step)
        finally:
            for each in group:
                each.discard()
        if self.watcher is not None:
            self.watcher.committed(files, size)
        tallied = 0
        try:
            for each, new in zip(group, written, strict=False):
                path = each.outcome.path
                if new == path:
                    each.outcome = FileOutcome(path, elsewhere="already stored by another writer")
                elif isinstance(new, str):
                    each.outcome = FileOutcome(path, each.outcome.container, records=each.outcome.records, alias_of=new)
                else:
                    each.outcome.new_records = new
                if self.leases is not None and new != path:
                    self.leases.done(each.source_row["sha256"])
                self.tally(each.outcome)
                tallied += 1
        finally:
            del group[:tallied]
        stop_if_received()

    def drop_lost_leases(self, group: list[PreparedFile]) -> None:
        """Take out of `group` the files whose lease another writer took over while they were prepared."""
        if self.leases is None:
            return
        for lost in [p for p in group if not self.leases.confirm(p.source_row["sha256"])]:
            group.remove(lost)
            lost.discard()
            why = "its lease was taken over by another writer while this one prepared it"
            self.summary.not_stored.append(f"{lost.outcome.path}: {why}")
            self.tally(FileOutcome(lost.outcome.path, elsewhere=why))

    def tally_landed(self, group: list[PreparedFile]) -> None:
        """Count the files of a commit cut short that landed all the same: an interrupt that arrives as COMMIT
        finishes is raised after it, and what the run says it committed must be what the archive holds."""
        keys = [(p.source_row["path"], p.source_row["sha256"]) for p in group]
        try:
            landed = versions.recorded(self.con, keys)
        except duckdb.Error:
            return
        for each in [p for p, key in zip(group, keys, strict=False) if key in landed]:
            each.outcome.new_records = each.outcome.records
            if self.leases is not None:
                self.leases.done(each.source_row["sha256"])
            self.tally(each.outcome)

    def versions(self, sources: list[SourceFile]) -> tuple[Work, list[str]]:
        """Sort the listed files: versions recorded already (tallied as unchanged; their contents are
        returned second), bytes stored already at another path or listed twice (`aliases`, recorded after
        the run's commits), and versions to store (returned first). An empty or unreadable file has no
        content to count twice, so it is never an alias."""
        latest = versions.latest_at(self.con, [source.path for source in sources])
        listed: dict[tuple[str, str], tuple[SourceFile, str, int, str | None]] = {}
        for source in sources:
            before = latest.get(source.path) if source.path != STDIN else None
            sha256, size, head = source.fingerprint(before.size if before else None)
            if source.store is not None:  # a store's next snapshot continues its lineage, whatever changed
                head = before.sha256 if before else None
            listed.setdefault((source.path, sha256), (source, sha256, size, head))
        known = versions.recorded(self.con, list(listed))
        contents = versions.stored_contents(self.con, [sha256 for _, sha256 in listed])
        work, stored, first_paths = [], [], {}
        for key, (source, sha256, size, head) in listed.items():
            if key in known:
                stored.append(sha256)
                records, container = known[key]
                self.tally(FileOutcome(key[0], container, records=records, unchanged=True))
            elif size and (sha256 in contents or sha256 in first_paths):
                self.aliases.append((source, sha256, size))
            else:
                first_paths.setdefault(sha256, source.path)
                version = versions.new_version(
                    source.path, sha256, size, head, latest.get(source.path), may_extend=source.path != STDIN
                )
                work.append((source, version))
        return self.rotated(work), stored

    def rotated(self, work: Work) -> Work:
        """Each new lineage that begins with the bytes of the latest version at a sibling path whose name its
        own name extends (`app.log` rotated to `app.log.1` after it grew) continues that version instead, as a
        log that grew at its own path does: the rotated file's results are not counted beside the earlier
        version's. Only files with such a sibling are read again, to hash their first bytes."""
        starts = [
            (n, source) for n, (source, version) in enumerate(work) if version.replaces is None and _may_rotate(source)
        ]
        siblings = versions.rotated_from(self.con, [source.path for _, source in starts]) if starts else {}
        for n, source in starts:
            version = work[n][1]
            for earlier in siblings.get(source.path, []):
                if earlier.size < version.size and source.fingerprint(earlier.size)[2] == earlier.sha256:
                    work[n] = (source, versions.continued(version, earlier))
                    break
        return work

    def record_aliases(self) -> None:
        """Record each path whose bytes the archive holds at another path; nothing else is stored for it."""
        contents = versions.stored_contents(self.con, [sha256 for _, sha256, _ in self.aliases])
        rows, aliased = [], []
        for source, sha256, size in self.aliases:
            if sha256 not in contents:
                why = "the same bytes were listed at another path, which was not stored in this run"
                self.tally(FileOutcome(source.path, elsewhere=why))
                continue
            stored = contents[sha256]
            if any(row["path"] == source.path for row in stored):  # another writer stored it here first
                self.tally(FileOutcome(source.path, elsewhere="already stored by another writer"))
                continue
            first = stored[0]
            row = {**first, "path": source.path, "size": size, "ingested_at": datetime.now(UTC)}
            rows.append(alias_row(row, first["path"]))
            aliased.append(
                FileOutcome(source.path, first["container"], records=first["records"] or 0, alias_of=first["path"])
            )
        write_aliases(self.con, rows, self.summary.count_retry)
        for outcome in aliased:
            self.tally(outcome)

    def count_index(self) -> None:
        """Totals of the archive's index after the run, counted as `stats` counts them."""
        for name, value in counts.stats(self.con, INDEX_TOTALS).items():
            setattr(self.summary, name, value)


def _may_rotate(source: SourceFile) -> bool:
    return source.path != STDIN and source.store is None and source.data is None and not source.unreadable


def _skip_checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Leave the WAL for the next open to replay: checkpointing it as the archive closes takes seconds
    (2.1 s after 56,000 records), and an interrupted run has to stop now."""
    with suppress(duckdb.Error):
        con.execute("PRAGMA disable_checkpoint_on_shutdown")


@contextmanager
def _settings(con: duckdb.DuckDBPyConnection, settings: dict[str, str]) -> Iterator[None]:
    """DuckDB's `settings` within the block, as they were after it."""
    before = {name: con.execute("SELECT current_setting(?)", [name]).fetchone()[0] for name in settings}
    for name, value in settings.items():
        con.execute(f"SET {name} = '{value}'")
    try:
        yield
    finally:
        for name, value in before.items():
            con.execute(f"SET {name} = '{value}'")


def _limit_memory(con: duckdb.DuckDBPyConnection, batch_bytes: int) -> None:
    """The buffer pool: the base limit, or three times the largest batch the next commit loads if that is more."""
    con.execute(f"SET memory_limit = '{max(INGEST_MEMORY_MB, 3 * batch_bytes // 2**20)}MB'")
