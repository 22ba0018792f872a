"""The Python API: everything the CLI does, an `Archive` does."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Self

import duckdb

from .defaults import MIN_BASE
from .errors import ArchiveError, QueryError, UsageError
from .store import audit_sums, cells, counts, kept, migrations, trust, views
from .store.backend import Location, exists, locate
from .store.connection import DEFAULT_WAIT_SECONDS, catalog_locked, connect, retry_busy, transaction
from .store.heal import Healed, heal, orphans, recovering, refuse_while_writing
from .store.refusals import ArchiveDamagedError, ArchiveUnusableError, ArchiveUnwritableError, explain

if TYPE_CHECKING:
    from typing import BinaryIO

    from sqlmodel import SQLModel

    from .query.listing import Listing
    from .query.transcript import ResultView
    from .store.models import SourceRow


def _refuse_newer(con: duckdb.DuckDBPyConnection, location: Location) -> None:
    """Close `con` and raise `SchemaTooNewError` when the archive's schema is newer than this program's."""
    _checking(con, location, lambda checked: migrations.refuse_newer(checked, location.describe()))


def _checking(con: duckdb.DuckDBPyConnection, location: Location, check: Callable):
    """`check(con)`'s answer; when it fails, `con` is closed first, and a DuckDB error that is a trouble of
    the archive file (a damaged block the check read) is raised as the one line that says so."""
    try:
        return retry_busy(check, con)
    except BaseException as exc:
        con.close()
        refusal = explain(exc, location.url) if isinstance(exc, duckdb.Error) and not location.is_lake else None
        if refusal is not None:
            raise refusal from exc
        raise


def _trusted(
    con: duckdb.DuckDBPyConnection, location: Location, refuse: bool, planted: bool = True, define: bool = True
) -> list[str]:
    """What is wrong with the archive's schema (`store.trust`), read before anything binds what the archive
    holds: what it plants where the package's SQL would find it (unless not `planted`: looked at already), then,
    at the current schema version, how its tables differ from the migrations'. When there is nothing and the
    schema is current, the package's views are made on `con` (`views.define`, unless not `define`). All in one
    transaction: a lake's catalog is read once. When `refuse`, `con` is closed and the first is raised
    (`ArchiveDamagedError`)."""
    state = trust.identity(location) if planted else None
    planted = planted and not trust.unplanted(state)

    def look(connection: duckdb.DuckDBPyConnection) -> list[str]:
        with transaction(connection):
            found = trust.planted(connection) if planted else []
            if planted and not found:
                trust.remember_unplanted(state)
            if found or migrations.current_version(connection) != migrations.latest_version():
                return found
            found = trust.table_problems(connection)
            if not found and define:
                views.define_in(connection)
            return found

    try:
        found = _checking(con, location, look)
    except duckdb.Error as exc:  # DuckDB's listings, or the views over tables found as they should be: never seen
        found = [f"its schema cannot be read, or the archiver's views made over it ({' '.join(str(exc).split())})"]
    if found and refuse:
        with suppress(duckdb.Error):
            con.close()
        trust.refuse_damaged(location.describe(), found)
    return found


def _upgraded(con: duckdb.DuckDBPyConnection, replayed: bool) -> list[Healed]:
    """Apply pending migrations, and heal (`store.heal`): what a killed writer's replay left of uncommitted
    versions when a WAL was replayed; when the schema was upgraded, every row no committed ingest recorded
    (an old archive's damage, as `db repair` finds it). What was healed. Close `con` if that fails (a full
    disk, another writer's lock)."""
    try:
        applied = retry_busy(migrations.upgrade, con)
        if applied:
            healed = retry_busy(lambda connection: heal(connection, unanchored=True), con)
        else:
            healed = retry_busy(heal, con) if replayed else []
        if applied or healed:
            retry_busy(_refresh_kept, con)
        return healed
    except BaseException:
        with suppress(duckdb.Error):
            con.close()
        raise


def _refresh_kept(con: duckdb.DuckDBPyConnection, on_batch: Callable[[str, int, int], None] | None = None) -> None:
    """Make the pending rows of the kept tables again: the claim index's (`store.kept`), the counts'
    (`store.counts`), then the audit's (`audit.kept`); `on_batch(what, done, total)` hears of each batch (what:
    the kept table's name in words)."""
    from functools import partial

    from .audit import kept as audit_kept

    kept.refresh(con, partial(on_batch, "the claim index") if on_batch else None)
    counts.refresh(con, partial(on_batch, "the kept counts") if on_batch else None)
    audit_kept.refresh(con, partial(on_batch, "the kept audit") if on_batch else None)


def kept_audit_problems(con: duckdb.DuckDBPyConnection) -> list:
    """`db check`'s `kept-audit`: the results of a sample whose kept audit rows differ from their definition."""
    from .audit.kept import differing
    from .store.check import EXAMPLES, INDEX_SAMPLE, Problem

    keys = differing(con, f"""SELECT result_key FROM (SELECT DISTINCT result_key FROM results)
                              USING SAMPLE reservoir({INDEX_SAMPLE} ROWS) REPEATABLE (40)""")  # fmt: skip
    what = (
        f"results (of a sample of {INDEX_SAMPLE:,}) whose kept audit rows differ from their definition "
        "(`archiver db repair` makes them again)"
    )
    return [Problem("kept-audit", what, len(keys), keys[:EXAMPLES])] if keys else []


def _remove(location: Location) -> None:
    """Remove an archive file this process made, and its WAL, when it came to hold nothing."""
    for leftover in (location.catalog_path, location.catalog_path + ".wal"):
        with suppress(FileNotFoundError):
            os.remove(leftover)


_UNRECOVERED = (
    "{}: read as it is: the archive cannot be written, so what a killed ingest left in its write-ahead log "
    "was read without being checked (`archiver db check` names rows of an ingest that never committed)"
)


class Archive:
    """An open archive: one DuckDB connection, the schema at the current version."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        path: str,
        location: Location | None = None,
        created: bool = False,
        healed: list[Healed] | None = None,
        damage: list[str] | None = None,
    ) -> None:
        self.con = con
        self.path = path
        self.location = location or locate(path)
        self.created = created  # this open made the archive file
        self._discard_if_empty = False
        self.healed = healed or []  # what this open (or `upgrade`) removed of rows no committed ingest recorded
        self.reindexed = 0  # results whose claim index rows `repair` made again
        self._limits = None  # the bounds of `sql` inside `bounded`
        self.damage = damage or []
        """What is wrong with the archive's schema (`store.trust`), when opened without `refuse_damage`."""
        self.notes: list[str] = []
        """What a person should know of how the archive was opened (one line each; the CLI prints them)."""

    @classmethod
    def open(
        cls,
        path: str | None = None,
        read_only: bool = False,
        wait: float = DEFAULT_WAIT_SECONDS,
        upgrade: bool = True,
        data_path: str | None = None,
        refuse_damage: bool = True,
    ) -> Archive:
        """Open (creating if need be), bring the schema up to date and remove what a killed writer's replay
        left of uncommitted versions (`store.heal`; a read-only open heals through a short write-open
        first), unless `upgrade` is False.

        `path`: a DuckDB file, or a lake: `ducklake:postgres:dbname=... host=...`, `ducklake:sqlite:PATH`
        or `ducklake:PATH` (default $ARCHIVER_DB, else ./archive.duckdb); `data_path`: where a new lake
        keeps its Parquet files (default $ARCHIVER_DATA_PATH; beside a file catalog if unset).
        An archive whose schema is newer than this program's migrations is refused (`SchemaTooNewError`),
        except by a read-only open without `upgrade` (`archiver db current`). An archive whose tables are not its
        schema's, or that defines functions of its own, is refused (`ArchiveDamagedError`, `store.trust`) unless
        not `refuse_damage` (`db check`, which lists it: `damage`); the archiver never binds SQL the archive holds,
        and reads the package's views (`store.views.define`)."""
        location = locate(path, data_path)
        if read_only:
            con = connect(location, read_only=True, wait=wait)
            damage = _trusted(con, location, refuse_damage)
            if upgrade and not damage:
                _refuse_newer(con, location)
            healed, notes = [], []
            if (
                upgrade
                and not damage
                and ((outdated := _checking(con, location, migrations.outdated)) or recovering(location))
            ):
                con.close()
                try:
                    with cls.open(path, wait=wait, data_path=data_path, refuse_damage=refuse_damage) as writer:
                        healed, damage = writer.healed, writer.damage
                except ArchiveUnwritableError as exc:
                    if outdated:
                        raise ArchiveUnwritableError(
                            f"{exc}; its schema is older than this archiver's and is upgraded as it opens"
                        ) from None
                    notes.append(_UNRECOVERED.format(location.describe()))
                con = connect(location, read_only=True, wait=wait)
                damage = damage or _trusted(con, location, refuse_damage)
            archive = cls(con, location.url, location, healed=healed, damage=damage)
            archive.notes = notes
            return archive
        return cls._open_writing(location, wait, upgrade, refuse_damage)

    @classmethod
    def _open_writing(cls, location: Location, wait: float, upgrade: bool, refuse_damage: bool) -> Archive:
        """`open` for writing."""
        replayed = recovering(location)
        created = not location.is_lake and not exists(location)
        try:
            con = connect(location, wait=wait)
            healed, damage = [], _trusted(con, location, refuse_damage, define=False)
            if not damage:
                _refuse_newer(con, location)
                healed = _upgraded(con, replayed) if upgrade else []
                damage = _trusted(con, location, refuse_damage, planted=False)
        except ArchiveDamagedError as exc:  # met as the views were made again (`views.create`)
            if refuse_damage:
                raise
            damage = exc.found
        except (duckdb.Error, ArchiveUnusableError):  # not ArchiveBusyError: then the file is another process's
            if created:
                _remove(location)
            raise
        return cls(con, location.url, location, created, healed, damage)

    def close(self) -> None:
        """Close; an archive this open created and an ingest left empty is removed first, while this
        process still holds it, so no other process can have opened it meanwhile."""
        if self._discard_if_empty and self._holds_no_source():
            _remove(self.location)
        self.con.close()

    def _holds_no_source(self) -> bool:
        try:
            return self.con.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
        except duckdb.Error:
            return False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ingest(
        self,
        paths: Iterable[str],
        on_file: Callable | None = None,
        workers: int | None = None,
        wait_for_writers: bool = False,
        tables: Sequence[str] = (),
        watcher=None,
    ):
        """Ingest files, directories, globs, "-" or live task stores (`postgresql://`, `mysql://` URLs; `tables`
        names their tables to read, default every task table); `workers` parsing processes (default 1). On a
        lake that several writers share, `wait_for_writers` waits out files another live writer is ingesting.
        `on_file` is called as each file is done, and `watcher` (`archiver.ingest.Watcher`) told of the reading.

        An ingest into an archive this open created that stores no source (a missing path, an empty folder,
        a full disk) leaves no archive file behind when the archive is closed. A DuckDB error that is a
        trouble of the archive file (a full disk, no permission to write) is raised as `ArchiveUnusableError`."""
        from .audit import kept as audit_kept
        from .ingest import ingest

        with self._writing() as leases:
            return ingest(self.con, paths, on_file, workers, leases, wait_for_writers, tables, watcher,
                          refreshes=(audit_kept.refresh,))  # fmt: skip

    def follow(
        self,
        directory: str,
        interval: float | None = None,
        on_file: Callable | None = None,
        on_pass: Callable | None = None,
        workers: int | None = None,
        until: Callable[[], bool] | None = None,
    ):
        """Ingest the closed segments of a spool directory (`archiver record --spool DIR`) as they appear,
        every `interval` seconds, until SIGINT or SIGTERM (raised as `archiver.interrupts.Interrupted`
        between commits) or `until()` is true after a pass: `archiver.ingest.follow`, this archive held open
        (and a file archive locked) while it follows; `follow_spool` lets readers in between passes.
        `on_pass` hears each pass's `IngestSummary`; returns the summary of all passes."""
        from .audit import kept as audit_kept
        from .ingest import follow, ingest

        with self._writing() as leases:
            return follow(directory, lambda paths: ingest(self.con, paths, on_file, workers, leases,
                                                          refreshes=(audit_kept.refresh,)),
                          interval, on_pass, until)  # fmt: skip

    @contextmanager
    def _writing(self):
        """The leases of a lake's writer (None for a file) while an ingest writes; a DuckDB error that is a
        trouble of the archive file (a full disk, no permission to write) raised as `ArchiveUnusableError`.
        An ingest into an archive this open created that stores nothing leaves no file behind."""
        from .store.leases import leases_for

        leases = leases_for(self.location)
        self._discard_if_empty = self.created
        try:
            yield leases
        except duckdb.Error as exc:
            refusal = catalog_locked(exc, self.location) if self.location.is_lake else explain(exc, self.path)
            if refusal is not None:
                raise refusal from exc
            raise
        finally:
            if leases is not None:
                leases.close()
            self._define_views()

    def _define_views(self) -> None:
        """Define the package's views on this connection again after it wrote (`views.define_in`: whether the claim
        index is settled is read as they are defined); a connection the write broke keeps those it had."""
        with suppress(duckdb.Error):
            views.define(self.con)

    def transfer_to(self, target: str, data_path: str | None = None, wait: float = DEFAULT_WAIT_SECONDS) -> dict:
        """Copy every table into the archive `target` (a file or a lake, created if need be, holding no
        sources yet): the same rows, raw bytes and counts. Returns the target's location and row counts."""
        from .store.transfer import transfer_archive

        with Archive.open(target, wait=wait, data_path=data_path) as into:
            return {"target": into.location.describe(), **transfer_archive(self.con, into.con)}

    def stats(self) -> dict[str, int]:
        """The archive's counts (`views.STAT_QUERIES` defines them), the sums over results kept by the writes
        (`store.counts`)."""
        return counts.stats(self.con)

    def cited(self) -> dict:
        """The headline figure, as the audit's summary counts it over the whole archive: quantitative results,
        those validly cited and their share, overall and `per_agent` and `per_study` (`archiver.audit.summary`)."""
        from .audit.run import audited
        from .audit.summary import CITED_FIELDS

        with audited(self.con, []) as audit:
            return {name: audit.summary[name] for name in CITED_FIELDS}

    def version(self) -> int:
        return migrations.current_version(self.con)

    def upgrade(
        self,
        upto: int | None = None,
        on_batch: Callable[[str, int, int], None] | None = None,
        before: Callable[[migrations.Migration], None] | None = None,
    ) -> list:
        """Apply pending migrations (up to `upto`; `before` hears of each as it begins); at the latest version,
        remove what no committed ingest recorded, as an open that upgrades does (kept in `healed`), and make the
        pending rows of the claim index and the kept audit (`store.kept`, `audit.kept`; `on_batch(what, done,
        total)` hears of each batch of results)."""
        applied = migrations.upgrade(self.con, upto, before)
        if applied and migrations.current_version(self.con) == migrations.latest_version():
            self.healed += heal(self.con, unanchored=True)
        if migrations.current_version(self.con) == migrations.latest_version():
            _refresh_kept(self.con, on_batch)
            self._define_views()
        return applied

    def repair(self, dry_run: bool = False) -> list[Healed]:
        """Remove the index rows no committed ingest recorded, whatever version wrote them (`store.heal`):
        rows of versions without a committed `sources` row, and parts, citations and claims whose copy or
        Part is not indexed; record them in `healed`. What was removed (with `dry_run`, what would be; the
        archive is left as it was), by table and file version. Re-ingesting their files indexes them again.

        Then the claim index is made again for every result (`store.kept`; how many in `reindexed`).

        Needs the archive open for writing, at the latest schema (an open that upgrades repairs as well).
        On a lake, refused while another writer holds leases (its rows are not committed yet)."""
        if migrations.pending(self.con):
            raise ArchiveError(
                f"{self.location.describe()}: the archive's schema is at version {self.version()}, older than "
                f"this archiver's ({migrations.latest_version()}); `archiver db repair` without --dry-run "
                "upgrades it and repairs it"
            )
        refuse_while_writing(self.location)
        if dry_run:
            return orphans(self.con)
        from .audit import kept as audit_kept

        healed = heal(self.con, unanchored=True)
        self.reindexed = kept.rebuild(self.con)
        with transaction(self.con):
            cells.rebuild(self.con)  # made again whole, not changed by differences
        counts.rebuild(self.con)  # its sums made again too, not changed by differences
        audit_kept.refresh(self.con)  # `rebuild` marked every result pending for the kept audit too
        with transaction(self.con):
            audit_sums.rebuild(self.con)  # made again whole, not changed by differences
        self._define_views()
        return healed

    def sources(self) -> list[SourceRow]:
        """The recorded source-file versions as typed `SourceRow`s, by path and time of ingest."""
        from .store.models import SourceRow, typed

        return typed(SourceRow, views.cursor(self.con).execute("SELECT * FROM sources ORDER BY path, ingested_at"))

    def rows(self, table: str, limit: int | None = None) -> list[SQLModel]:
        """The rows of one of the archive's tables as its SQLModel class (`archiver.store.models.ROWS`:
        `sources`, `records`, `results`, `parts`, `citations`, `claims`, ...), in primary-key order; at
        most `limit`. For the lineage questions as dicts, see `claims`, `citations` and `impact`."""
        from .store.models import ROWS, typed

        model = ROWS.get(table)
        if model is None:
            raise QueryError(f"no table {table!r} has typed rows; one of {', '.join(sorted(ROWS))}")
        if limit is not None and limit < 0:
            raise QueryError("limit must not be negative")
        order = ", ".join(f'"{column.name}"' for column in model.__table__.primary_key.columns)
        bounded = "" if limit is None else f" LIMIT {int(limit)}"
        return typed(model, views.cursor(self.con).execute(f'SELECT * FROM "{table}" ORDER BY {order}{bounded}'))

    def audit(self, rules=(), exclude_rules=(), min_base: float = MIN_BASE, **selection):
        """Check the Citations v1 promises over the index; an `AuditReport` of findings and counts.

        `rules`/`exclude_rules` are rule ids (`archiver.audit.RULES`). The selection filters are the
        query commands' (`archiver.query.selection.Selection`, `source` among them).
        """
        with self.audited(rules, exclude_rules, min_base, **selection) as audit:
            return audit.report()

    @contextmanager
    def audited(self, rules=(), exclude_rules=(), min_base: float = MIN_BASE, **selection):
        """The audit as `audit`, its findings kept in the archive's connection while the block runs, so
        that they can be written out one by one (`archiver.render.findings.write`)."""
        from .audit import select_rules
        from .audit.run import audited
        from .query.selection import Selection

        chosen = select_rules(tuple(rules), tuple(exclude_rules))
        with audited(self.con, chosen, Selection.of(**selection), min_base) as audit:
            yield audit

    def _lineage(self, name: str, order_by: str | None, limit: int | None, filters: dict) -> Listing:
        from .query.lineage import QUERIES
        from .query.listing import Listing
        from .query.output import QueryRows, json_text
        from .query.selection import Selection

        query = QUERIES[name](Selection.of(**filters), order_by=order_by, limit=limit)
        limits = self._limits  # inside `bounded`, a cursor its watcher stops at a signal or the timeout
        rows = QueryRows(self.con, query.sql, query.params, **({"cursor_of": limits.cursor} if limits else {}))
        return Listing(query.fields, rows, table_fields=query.table_fields, spelled=json_text(rows, query.fields))

    def unmatched(self, **filters) -> list[str]:
        """Why a selection may match nothing: its text filter values that match no stored value, each with
        the values it may have meant (`archiver.query.suggest`)."""
        from .query.selection import Selection
        from .query.suggest import unmatched

        return unmatched(self.con, Selection.of(**filters))

    def claims(self, order_by: str | None = None, limit: int | None = None, **filters) -> Listing:
        """One dict per claim and citation it rests on (claims deduplicated across stored copies).
        Selection: see `archiver.query.selection.Selection`; a value with `*` is a glob."""
        return self._lineage("claims", order_by, limit, filters)

    def citations(self, order_by: str | None = None, limit: int | None = None, **filters) -> Listing:
        """One dict per distinct citation, with how many claims, results, tasks and agents rest on it."""
        return self._lineage("citations", order_by, limit, filters)

    def impact(self, order_by: str | None = None, limit: int | None = None, **filters) -> Listing:
        """The tasks, contexts, agents and source files affected by the matching citations, with counts."""
        return self._lineage("impact", order_by, limit, filters)

    def results(self, ident: str, copy: str | None = None) -> list[ResultView]:
        """The results a task id, message id or context id names, as `ResultView`s ready to render.

        `copy`: each result as stored in this file, rather than its fullest copy.
        """
        from .query.transcript import transcript

        return transcript(views.cursor(self.con), ident, copy)

    def show(self, ident: str, copy: str | None = None) -> list[ResultView]:
        """Deprecated: `results` (the objects), or `render` (the text `archiver show` prints)."""
        warnings.warn("Archive.show is Archive.results now; Archive.render gives text", DeprecationWarning, 2)
        return self.results(ident, copy)

    def render(
        self, ident: str, fmt: str = "text", copy: str | None = None, colour: bool = False, width: int | None = None
    ) -> str:
        """What `archiver show` prints: the `results` as text (with `colour`, coloured for a terminal; with
        `width`, fitted to that many columns), as
        one self-contained HTML page (fmt="html"), or as JSON (fmt="json": the web view's `/result/ID.json`)."""
        results = self.results(ident, copy)
        if fmt == "json":
            from .render.jsontext import plain, results_document

            return plain(results_document(ident, results)).decode() + "\n"
        if fmt == "html":
            from .render.html import render_html

            return render_html(results, f"archiver show {ident}")
        from .render.text import render_text

        return render_text(results, colour, width)

    def export(self, target: str | os.PathLike | BinaryIO, fmt: str = "jsonl", **selection):
        """Export records or the index.

        fmt "jsonl": the selected raw records as JSON Lines, in ingest order, to `target`: a path (the
        file is made or replaced) or a file object open for writing (bytes; a text one's `buffer`); returns
        how many. fmt "files": the selected sources re-created under the directory path `target`; returns
        the `ExportedFile`s. fmt "parquet": the index tables under the directory path `target`; returns
        {table: path}. A directory is made if need be. A target that cannot be used raises
        `ExportTargetError`. The selection (`archiver.query.selection.Selection`) picks the records of
        matching results, and `source` the records of matching files.
        """
        from .export.raw import empty_versions, jsonl, recreate, selected_records
        from .export.target import binary_out, directory
        from .query.selection import Selection

        if fmt not in ("jsonl", "files", "parquet"):
            raise QueryError(f"unknown export format {fmt!r}: jsonl, files or parquet")
        if fmt == "parquet":
            from .export.parquet import export_parquet

            return export_parquet(views.cursor(self.con), directory(target, fmt))
        chosen = Selection.of(**selection)
        sql, params = selected_records(chosen)
        if fmt == "files":
            return recreate(self.con, sql, params, directory(target, fmt), empty_versions(chosen))
        with binary_out(target, fmt) as out:
            return jsonl(self.con, sql, params, out)

    def write(self, listing: Listing, fmt: str, target: str | os.PathLike | BinaryIO, headers: bool = True) -> int:
        """Write a listing (`claims`, `citations`, `impact` or `sql`'s rows, the audit's findings or
        verify's verdicts) in one of the formats the CLI's `--format` and the web view's downloads offer
        (`archiver.render.formats`) to `target`: a path (made or replaced) or a file object open for
        writing; how many items it wrote. `headers=False` leaves out a table's, CSV's or TSV's line of
        field names. A format the listing cannot be written in is a `UsageError` naming those it can."""
        from .export.target import binary_out
        from .render.formats import formats_for, write

        kind = listing.name or "rows"
        offered = formats_for(kind)
        if fmt not in offered:
            raise UsageError(f"{kind} cannot be written as {fmt!r}: one of {', '.join(offered)}", "fmt")
        with binary_out(target, fmt) as out:
            return write(listing, fmt, out, headers)

    def sql(self, statement: str, params: list | dict | None = None) -> Listing:
        """Rows of one read-only SELECT, run each time they are read (an EXPLAIN's or a pragma's, once, now); anything
        that writes, attaches, copies, installs or changes a setting, and any function or table not on the
        allow-list (`query.allowlist`), or text that is not UTF-8, raises `NotReadOnlyError`. Inside
        `bounded`, its rows are read within that block's bounds."""
        from .query.listing import Listing
        from .query.output import QueryRows, stream
        from .query.readonly import needs_extension, read_only_statement, utf8_text

        for name, value in params.items() if isinstance(params, dict) else enumerate(params or [], 1):
            if isinstance(value, str):
                utf8_text(value, f"the value of ${name}")
        sql = read_only_statement(views.cursor(self.con), statement)
        limits = self._limits
        rows = QueryRows(self.con, sql, params or [], **({"cursor_of": limits.cursor} if limits else {}))
        try:
            try:
                described = rows.described()
            except duckdb.ParserException:  # EXPLAIN, PRAGMA: no query can wrap them; their few rows are read now
                cursor = rows.run()
                described, rows = cursor.description, list(stream(cursor))
        except duckdb.InvalidInputException as exc:
            raise _parameters_misgiven(exc) or QueryError(" ".join(str(exc).split())) from exc
        except duckdb.Error as exc:
            raise needs_extension(exc) or QueryError(" ".join(str(exc).split())) from exc
        fields = tuple(d[0] for d in described)
        return Listing(fields, rows, table_fields=fields)

    @contextmanager
    def bounded(self, max_memory: int | None = None, timeout: float | None = None):
        """Within the block, the rows of `sql` are read with DuckDB's memory held to `max_memory` bytes
        (default 2 GiB; what does not fit spills to a temporary folder, at most 4 times as much) and are
        stopped `timeout` seconds after the block began (default 60; 0: no limit), raising
        `QueryTimeoutError`, or at once by SIGINT or SIGTERM, raising `interrupts.Interrupted`
        (`query.limits`)."""
        from .query.limits import MAX_MEMORY, TIMEOUT, Limits

        limits = Limits(max_memory or MAX_MEMORY, TIMEOUT if timeout is None else timeout or None)
        with limits.applied(self.con):
            self._limits = limits
            try:
                yield limits
            finally:
                self._limits = None

    # Re-run citations: re-derive each cited number from the data layer the agent documents.

    def data_layer(self, path: str | None = None):
        """The `DataLayer` at `path`, else the one found beside the archive (`<archive stem>.datalayer.toml`,
        then `archiver-data-layer.toml` in its folder); `DataLayerError` when there is none."""
        from .verify import DataLayer, DataLayerError, find_beside

        beside = self.location.catalog_path if self.location.catalog != "postgres" else None
        path = path or (find_beside(beside) if beside else None)
        if path is None:
            raise DataLayerError(
                f"no data layer given and none beside {self.path} (looked for "
                "<archive stem>.datalayer.toml and archiver-data-layer.toml)"
            )
        return DataLayer.load(path)

    def verify(
        self,
        data_layer: str | None = None,
        tolerance: float | None = None,
        timeout: float | None = None,
        resume: bool | None = None,
        **filters,
    ):
        """Re-derive the claims of every matching citation from the data layer and record a verdict for
        each (reproduced, differs, partial, not-rerunnable); a `VerifyReport`. Selection as for `claims`. `resume`:
        keep current verdicts instead of re-running them (default: after an interrupted run)."""
        from .query.selection import Selection
        from .verify import verify

        layer = self.data_layer(data_layer)
        return verify(self.con, layer, Selection.of(**filters), tolerance, timeout, resume)

    def verdicts(self, data_layer: str | None = None, **filters):
        """The latest stored verdict of every matching citation, without re-running anything; each marked
        stale when the data layer (given, or found beside the archive) has changed since it was made."""
        from .query.selection import Selection
        from .verify import find_beside, status

        beside = self.location.catalog_path if self.location.catalog != "postgres" else None
        layer = self.data_layer(data_layer) if data_layer or (beside and find_beside(beside)) else None
        return status(self.con, layer, Selection.of(**filters))

    def check(self) -> list:
        """The archive's integrity problems (`archiver.store.check.Problem`); empty when it is consistent:
        every index row rests on a stored raw record, no file is half ingested, counts agree."""
        from .store.check import EXAMPLES, Problem, check

        if self.damage:
            what = "ways the archive's schema is not the archiver's (nothing else was checked)"
            return [Problem("damaged-schema", what, len(self.damage), self.damage[:EXAMPLES])]
        problems = check(self.con)
        problems += kept_audit_problems(self.con)
        stored = trust.stored_sql_problems(self.con, views.VIEWS)
        if stored:
            what = (
                "views and tables stored in the archive that are not the archiver's (it never reads them; DuckDB would)"
            )
            problems.append(Problem("stored-view", what, len(stored), stored[:EXAMPLES]))
        if self.location.is_lake:
            from .store.lake import problems as lake_problems

            problems += lake_problems(self.con, self.location)
        return problems

    def cleanup(self):
        """On a lake: remove the leases of dead writers and the Parquet files its catalog does not list (a
        `store.lake.Cleanup`); None for a single DuckDB file, where a dead writer leaves nothing behind."""
        if not self.location.is_lake:
            return None
        from .store.lake import cleanup

        return cleanup(self.con, self.location)

    def healings(self) -> list[str]:
        """What opening this archive for writing removed: rows of file versions no ingest committed."""
        from .store.check import healings

        return healings(self.con)


def follow_spool(
    db: str | None,
    directory: str,
    interval: float | None = None,
    on_pass: Callable | None = None,
    workers: int | None = None,
    until: Callable[[], bool] | None = None,
    on_busy: Callable[[Exception], None] | None = None,
    wait: float = DEFAULT_WAIT_SECONDS,
    data_path: str | None = None,
):
    """`Archive.follow` as `archiver ingest --follow` runs it: a lake stays open (its readers and other writers
    share it); a file archive is opened for each pass that found segments and closed after it, so that
    readers (`query`, `serve`) get in between passes, and a pass that finds it busy with readers for longer
    than `wait` seconds tells `on_busy` and leaves its segments to the next pass."""
    from .ingest import follow

    if locate(db, data_path).is_lake:
        with Archive.open(db, wait=wait, data_path=data_path) as archive:
            return archive.follow(directory, interval, on_pass=on_pass, workers=workers, until=until)

    def store(paths: list[str]):
        with Archive.open(db, wait=wait, data_path=data_path) as archive:
            return archive.ingest(paths, workers=workers)

    return follow(directory, store, interval, on_pass, until, on_busy)


_UNSET = re.compile(r"Values were not provided for the following prepared statement parameters: (.*)")
_EXCESS = re.compile(r"identifiers of the excess parameters: (.*)")


def _parameters_misgiven(exc: duckdb.Error) -> UsageError | None:
    """The usage error of a statement's named parameters given a value too few or too many, if that is it."""
    for pattern, said in (
        (_UNSET, "no value given for {}: give each as -p NAME=VALUE"),
        (_EXCESS, "no {} in the statement"),
    ):
        found = pattern.search(str(exc))
        if found:
            named = ", ".join(f"${name.strip()}" for name in found.group(1).split(","))
            return UsageError(said.format(named), "--param")
    return None
