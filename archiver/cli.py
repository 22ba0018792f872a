"""The command line: a thin face over `archiver.Archive`. Heavy modules load lazily."""

from __future__ import annotations

import functools
import math
import os
import re
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import click
from click.core import ParameterSource
from click.shell_completion import BashComplete, CompletionItem, add_completion_class

from . import record as record_defaults
from .defaults import FOLLOW_INTERVAL_SECONDS, MIN_BASE, WAIT_SECONDS
from .query.filters import FILTERS, RESULT_IDS
from .render.fitting import terminal_width, wrapped
from .render.formats import AUDIT_FORMATS, HEADED, OUTPUT_FORMATS, VERIFY_FORMATS
from .render.paths import display_path, display_text
from .render.terminal import counted, painted, printable, wants_colour

DB_HELP = (
    "Archive: a DuckDB file, or a DuckLake: ducklake:postgres:'dbname=... host=...', ducklake:sqlite:PATH "
    "or ducklake:PATH (default: $ARCHIVER_DB, else ./archive.duckdb)."
)
WAIT_HELP = "Seconds to wait while another process holds the archive."


class Seconds(click.ParamType):
    """A duration in seconds: a finite number, 0 or more (`nan`, `inf` and `-1` are usage errors)."""

    name = "seconds"

    def convert(self, value, param, ctx):
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} is not a number of seconds (0 or more)", param, ctx)
        return seconds


SECONDS = Seconds()


class Bytes(click.ParamType):
    """A size: bytes, or a number with KB, MB, GB (powers of 1000) or KiB, MiB, GiB (of 1024); more than 0."""

    name = "size"
    UNITS: ClassVar[dict[str, int]] = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4}
    UNITS |= {"KIB": 1024, "MIB": 1024**2, "GIB": 1024**3, "TIB": 1024**4}

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip()
        number = text.rstrip("KMGTBIkmgtbi ")
        unit = text[len(number) :].strip().upper()
        try:
            size = float(number) * self.UNITS[unit]
        except (KeyError, ValueError):
            self.fail(f"{value!r} is not a size (e.g. 512MiB, 2GB, 1000000)", param, ctx)
        if not math.isfinite(size) or size < 1:
            self.fail(f"{value!r} is not a size of at least one byte", param, ctx)
        return int(size)


BYTES = Bytes()
DATA_PATH_HELP = (
    "Where a new lake keeps its Parquet files: a folder or object-store URL (default: "
    "$ARCHIVER_DATA_PATH, else beside a SQLite or DuckDB catalog)."
)


def _remember_data_path(ctx: click.Context, _param, value: str | None) -> None:
    ctx.meta["archiver.data_path"] = value


def db_options(func):
    func = click.option("--wait", type=SECONDS, default=WAIT_SECONDS, show_default=True, help=WAIT_HELP)(func)
    return click.option("--db", envvar="ARCHIVER_DB", default=None, help=DB_HELP)(func)


def data_path_option(func):
    """--data-path, only on the commands that can create a lake (it is read when a lake is made)."""
    return click.option(
        "--data-path",
        envvar="ARCHIVER_DATA_PATH",
        default=None,
        expose_value=False,
        callback=_remember_data_path,
        help=DATA_PATH_HELP,
    )(func)


def _data_path() -> str | None:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("archiver.data_path") if ctx else None


def open_archive(
    db: str | None,
    wait: float,
    read_only: bool = False,
    upgrade: bool = True,
    say_healed: bool = True,
    refuse_damage: bool = True,
):
    """The archive `--db` names; what goes wrong with it (here or later) is told by `ArchiverGroup`. What the
    open removed of rows no committed ingest recorded (a replay's, or an old archive's found on upgrading)
    is said in one line on stderr."""
    from .archive import Archive

    ctx = click.get_current_context(silent=True)
    if ctx:
        ctx.meta["archiver.db"] = db
    archive = Archive.open(
        db, read_only=read_only, wait=wait, upgrade=upgrade, data_path=_data_path(), refuse_damage=refuse_damage
    )
    for note in archive.notes:
        say(f"note: {note}", err=True)
    if archive.healed and say_healed:
        say_healed_rows(archive)
    return archive


def say_healed_rows(archive) -> None:
    say(f"{archive.location.describe()}: {removed_line(archive.healed)}; db check lists them", err=True)


def removed_line(found, verb: str = "removed") -> str:
    """`found` (`store.heal.Healed`s) in one line: the rows, and how many per table."""
    from .store.heal import removed_by_table

    per_table = removed_by_table(found)
    tables = ", ".join(f"{table} {rows:,}" for table, rows in per_table.items())
    return f"{verb} {sum(per_table.values()):,} index rows no committed ingest recorded ({tables})"


class ArchiverGroup(click.Group):
    """The one handler of errors a user can cause: each becomes one line and its exit status (a usage
    error, as click's own: 2, with the command's usage; any other: 1), never a traceback. An interrupt
    ends with 130 (SIGINT) or 143 (SIGTERM); a reader that stops reading (`| head`) ends it quietly, 0."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            raise escaped(exc) from None

    def invoke(self, ctx: click.Context):
        from .errors import UsageError
        from .interrupts import as_stopped_query
        from .redact import redacted

        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # click's own, quoting what was given (`No such option: ...`)
            raise escaped(exc) from None
        except BrokenPipeError:
            quiet_stdout()
            sys.exit(0)
        except KeyboardInterrupt as exc:
            ended(as_stopped_query(exc))
        except UsageError as exc:
            hint = f"Invalid value for '{exc.option}': " if exc.option else ""
            raise click.UsageError(printable(hint + str(exc)), click.get_current_context(silent=True) or ctx) from None
        except Exception as exc:
            stopped = as_stopped_query(exc)
            if stopped is not None:
                ended(stopped)
            line = refusal(exc, ctx.meta.get("archiver.db"), ctx.invoked_subcommand == "ingest")
            if line is None:
                raise
            error = click.ClickException(printable(redacted(line)))
            error.exit_code = getattr(exc, "exit_code", 1)
            raise error from None


def say(message: object, err: bool = False, tone: str | None = None) -> None:
    """Write one message for people (a line of a summary, a warning, a problem, an error): every command's
    words go out here, with what it quotes of files and values shown, never acted on (`printable`: a name
    holding a terminal escape is written as `\\x1b`), coloured by `tone` on a terminal (unless NO_COLOR)."""
    click.echo(painted(printable(str(message)), tone), err=err)  # click strips the colour but on a terminal


def escaped(exc: click.ClickException) -> click.ClickException:
    """A click error whose message quotes what was given, with its control characters as escapes."""
    exc.message = printable(exc.message)
    return exc


def ended(stopped) -> None:
    """An interrupted command ends with one line and 128 + the signal's number."""
    say(str(stopped), err=True)
    sys.exit(stopped.exit_code)


def quiet_stdout() -> None:
    """Point standard output at the null device, so that flushing it at exit finds no closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's runner)
        pass


def refusal(exc: Exception, db: str | None, ingesting: bool = False) -> str | None:
    """The line that tells the user about `exc`: an `ArchiverError`'s message, or a DuckDB error that is
    a trouble of the archive file (damaged, a full disk, out of memory: an ingest's or another command's)
    found after it was opened; None for a bug."""
    from .errors import ArchiverError

    if isinstance(exc, ArchiverError):
        return str(exc)
    duckdb = sys.modules.get("duckdb")
    if duckdb is None or not isinstance(exc, duckdb.Error):
        return None
    from .store.backend import locate
    from .store.objectstore import refusal as store_refusal
    from .store.refusals import explain

    location = locate(db)
    if location.is_lake:
        return store_refusal(exc, location.describe())
    explained = explain(exc, location.url, ingesting)
    return str(explained) if explained else None


def emit_json(value, indent: bool = True) -> None:
    """`value` as JSON on stdout; the control characters JSON may leave raw (DEL, C1) escaped too."""
    import orjson

    text = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0, default=str).decode()
    click.echo(_RAW_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", text))


_RAW_IN_JSON = re.compile("[\x7f-\x9f]")


def _a_moment(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse a --since/--until that is no time as it is parsed, so the usage shown is the command's."""
    from .errors import UsageError
    from .query.selection import moment

    if value is not None:
        try:
            moment(value, end=param.name == "until")
        except UsageError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def selection_options(func):
    """The filters of `archiver.query.selection.Selection`, as `archiver.query.filters.FILTERS` declares
    them, for every command that takes them; combinable, and an option repeated means any of its values."""
    for item in reversed(FILTERS):
        func = _filter_option(item)(func)
    return func


def _filter_option(item):
    """The click option of one filter (`archiver.query.filters.Filter`)."""
    if item.kind in ("text", "source"):
        complete = _archive_values(item.values) if item.values else _paths
        return click.option(item.option, item.name, multiple=True, help=item.help, shell_complete=complete)
    if item.kind == "time":
        return click.option(item.option, item.name, callback=_a_moment, help=item.help)
    if item.kind == "number":
        return click.option(item.option, item.name, type=float, help=item.help)
    return click.option("/".join(item.choices), item.name, default=None, help=item.help)


def _archive_values(values: str):
    """Shell completion from the archive's values (`values`: SQL; the `--db` given before it)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
        from .query.filters import archive_values

        return [CompletionItem(value) for value in archive_values(ctx.params.get("db"), values, incomplete)]

    return complete


class QuotingBashComplete(BashComplete):
    """Bash puts a completion in the command line as it is: a value with a space (`Versant Mega Tracker`)
    would be several arguments, so it is quoted here; zsh and fish quote their own."""

    def format_completion(self, item: CompletionItem) -> str:
        if item.type == "plain":
            item = CompletionItem(shlex.quote(item.value), help=item.help)
        return super().format_completion(item)


add_completion_class(QuotingBashComplete)


def _paths(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    return [CompletionItem(incomplete, type="file")]


SHORTCUTS = (
    ("json", "--json"),
    ("jsonl", "--nl"),
    ("csv", "--csv"),
    ("tsv", "--tsv"),
    ("markdown", "--md"),
    ("table", "-t"),
)
"""The flags that stand for a --format (`-t` only: --table is the source-table filter)."""


def format_options(formats: tuple[str, ...], default: str | None = None, help: str = "Output format."):
    """--format, its shortcuts and --no-headers, declared once for every command that prints rows. The
    command receives `fmt` (`default` when none is given; None: table on a terminal, else jsonl) and
    `headers`; two different formats are a usage error."""
    shortcuts = [(name, flag) for name, flag in SHORTCUTS if name in formats]

    def decorate(func):
        @functools.wraps(func)
        def command(*args, fmt, **kwargs):
            chosen = {fmt} - {None} | {name for name, _ in shortcuts if kwargs.pop(f"format_{name}")}
            if len(chosen) > 1:
                raise click.UsageError(f"choose one output format, not {' and '.join(sorted(chosen))}")
            return func(*args, fmt=chosen.pop() if chosen else default, **kwargs)

        headed = [name for name in formats if name in HEADED]
        if headed:
            command = click.option(
                "--headers/--no-headers",
                default=True,
                help=f"With {', '.join(headed[:-1])} or {headed[-1]}: a line of field names."
                if len(headed) > 1
                else f"With {headed[0]}: a line of field names.",
            )(command)
        for name, flag in reversed(shortcuts):
            command = click.option(flag, f"format_{name}", is_flag=True, help=f"Shortcut for --format {name}.")(command)
        shown = f"default: {default}" if default else "default: table on a terminal, else jsonl"
        return click.option("--format", "fmt", type=click.Choice(formats), help=f"{help.rstrip('.')} ({shown}).")(
            command
        )

    return decorate


def report_options(
    formats: tuple[str, ...], levels: tuple[str, ...], fail_help: str, format_help: str = "Output format."
):
    """The format options (default: table) and --fail-on (default: the first of `levels`) of a command that
    reports findings and gates on them."""

    def decorate(func):
        func = click.option(
            "--fail-on", type=click.Choice(levels), default=levels[0], show_default=True, help=fail_help
        )(func)
        return format_options(formats, "table", format_help)(func)

    return decorate


def output_options(func):
    """The format options, --limit and --order-by of a command that prints query rows."""
    func = format_options(OUTPUT_FORMATS)(func)
    func = click.option("--limit", type=click.IntRange(min=0), help="At most this many rows.")(func)
    return click.option("--order-by", help="Field(s) to sort by: field, -field or 'field desc', comma-separated.")(func)


@click.group(cls=ArchiverGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="a2a-archiver")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Archive A2A transcripts and hold their Citations v1 claims to account.

    Output formats, exit statuses, colour and shell completion: `archiver docs cli`; every page of the
    manual: `archiver docs`.
    """
    if os.environ.get("NO_COLOR"):
        ctx.color = False


@main.command(short_help="Ingest files, folders, globs, stdin or live task stores.")
@click.argument("paths", nargs=-1, required=True)
@db_options
@data_path_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="The summary's format.",
)
@click.option("--json", "as_json", is_flag=True, help="Shortcut for --format json.")
@click.option(
    "--workers", type=click.IntRange(1, 64), default=None, help="Preparing threads (default: one per core, at most 8)."
)
@click.option(
    "--wait-for-writers",
    is_flag=True,
    help="On a lake of several writers: wait for files another live writer is ingesting (until it "
    "commits them, or dies and this run takes them over) instead of leaving them unstored.",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="NAME",
    help="Of a postgresql:// or mysql:// task store: read this table (repeatable; schema.table for "
    "another schema). Default: every table shaped like an A2A SDK's task table.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show what it is doing (reading, committing), the files stored and the time left, on stderr "
    "(default: when it is a terminal).",
)
@click.option(
    "--follow",
    is_flag=True,
    help="PATH is a spool directory of `archiver record`: ingest its closed segments as they appear, "
    "printing a summary after each pass that found new ones, until SIGINT or SIGTERM. A file archive is "
    "open only while a pass stores, so queries and `serve` read it in between.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=FOLLOW_INTERVAL_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="With --follow: how often to look for new segments.",
)
def ingest(
    paths: tuple[str, ...],
    db: str | None,
    wait: float,
    fmt: str,
    as_json: bool,
    workers: int | None,
    wait_for_writers: bool,
    tables: tuple[str, ...],
    progress: bool | None,
    follow: bool,
    interval: float,
) -> None:
    """Ingest files, directories, globs, - (stdin) or live task stores into the archive.

    A task store is a URL: postgresql://user:password@host:port/database or mysql://... (MariaDB too),
    read in one read-only snapshot; a later run stores only the rows that changed (`archiver docs stores`).

    Exit status 1 when any record was quarantined (the good records are stored), when no transcript
    was found at all (an empty folder, no A2A object recognised in any file), or when files were left
    unstored because another writer of the lake was ingesting them (see --wait-for-writers).
    SIGINT (Ctrl-C) or SIGTERM stops it within seconds, keeping what was committed: exit status 130 or 143.

    With --follow DIR it runs until stopped so (the usual end of a follow), ingesting the spool's closed
    segments as the proxy closes them (`archiver docs ingest`).

    \b
    Examples:
      archiver ingest sample_transcripts/            # every file under the folder
      archiver ingest 'dumps/*.jsonl.gz' --db a.duckdb
      archiver ingest postgresql://reader@db/agents  # a live task store, read-only
      archiver ingest --follow spool/                # a recording proxy's spool, until Ctrl-C
    """
    from .ingest import default_workers
    from .interrupts import stopped_by_signals
    from .progress import Progress
    from .read.stores import shown

    if follow:
        _follow(paths, db, wait, as_json or fmt == "json", workers, interval)
        return
    with stopped_by_signals(), ended_by_signals(), Progress(progress) as line, open_archive(db, wait) as archive:
        summary = archive.ingest(
            paths,
            workers=workers or default_workers(),
            wait_for_writers=wait_for_writers,
            tables=tables,
            watcher=line,
        )
        line.finishing("closing the archive (its log written into the file)")
    for problem in summary.problems:
        say(f"quarantined: {display_text(problem)}", err=True)
    for path in summary.unrecognised_files:
        say(f"warning: {display_path(path)}: no A2A object recognised in this file", tone="warning", err=True)
    for folder in summary.folders_unreadable:
        say(f"warning: {folder}: folder not read", tone="warning", err=True)
    if summary.found_nothing:
        say(
            f"warning: no transcript found in {summary.files} file{'s' * (summary.files != 1)} "
            f"under {', '.join(shown(path) for path in paths)}",
            tone="warning",
            err=True,
        )
    for file in summary.not_stored:
        say(f"not stored: {file}; ingest again, or use --wait-for-writers", err=True)
    if as_json or fmt == "json":
        emit_json(summary.as_dict())
    else:
        say(wrapped(render_summary(summary), terminal_width(sys.stdout)))
    sys.exit(summary.exit_code)


def _follow(paths: tuple[str, ...], db: str | None, wait: float, as_json: bool, workers: int | None, interval: float):
    """`ingest --follow`: one summary (a line of JSON, with --json) per pass that found new segments."""
    from .archive import follow_spool
    from .errors import UsageError
    from .ingest import default_workers
    from .interrupts import stopped_by_signals

    if len(paths) != 1:
        raise UsageError("follows one spool directory; give exactly one PATH", "--follow")

    def passed(summary) -> None:
        for problem in summary.problems:
            say(f"quarantined: {display_text(problem)}", err=True)
        if as_json:
            emit_json(summary.as_dict(), indent=False)
        else:
            say(render_summary(summary))

    def busy(exc: Exception) -> None:
        say(f"{exc}; the new segments wait for the next pass", err=True)

    ctx = click.get_current_context()
    ctx.meta["archiver.db"] = db
    with stopped_by_signals(), ended_by_signals():
        follow_spool(db, paths[0], interval, passed, workers or default_workers(), on_busy=busy, wait=wait,
                     data_path=_data_path())  # fmt: skip


@contextmanager
def ended_by_signals():
    """An interrupted run ends with one line (what it committed) and 128 + the signal's number."""
    from .interrupts import Interrupted, as_interrupted

    try:
        yield
    except BaseException as exc:
        stopped = as_interrupted(exc)
        if not isinstance(stopped, Interrupted):
            raise
        ended(stopped)


def render_summary(summary) -> str:
    aliased = f", {summary.files_aliased} the same bytes as a stored file" if summary.files_aliased else ""
    lines = [
        (
            f"files {summary.files:,} ({summary.files_unchanged:,} unchanged{aliased})  records {summary.records:,}  "
            f"duplicates skipped {summary.duplicates_skipped:,}  quarantined {summary.quarantined:,}"
        ),
        (
            f"archive now holds: tasks {summary.tasks:,}  results {summary.results:,} "
            f"({counted(summary.copies, 'stored copy', 'stored copies')})  parts {summary.parts:,}  "
            f"citation Parts {summary.citations:,}  claims {summary.claims:,} (in stored copies)  "
            f"agent cards {summary.agent_cards:,}  error responses {summary.error_responses:,}"
        ),
    ]
    if summary.archive_files_skipped:
        lines.append(f"skipped {summary.archive_files_skipped} paths to the archive's own files")
    if summary.folders_unreadable:
        unread = len(summary.folders_unreadable)
        lines.append(f"skipped {unread} folder{'s' * (unread != 1)} that cannot be listed")
    if summary.claimed_elsewhere or summary.leases_taken_over or summary.commit_retries:
        lines.append(
            f"other writers: {len(summary.claimed_elsewhere)} files leased by them "
            f"({len(summary.not_stored)} not stored), {len(summary.leases_taken_over)} leases taken over, "
            f"{summary.commit_retries} commit retries"
        )
    return "\n".join(lines)


@main.command(short_help="How many results are validly cited, and the archive's counts.")
@db_options
@format_options(OUTPUT_FORMATS, "table")
def stats(db: str | None, wait: float, fmt: str, headers: bool) -> None:
    """Print the archive's counts: first how many quantitative results are validly cited, overall, per agent
    and per study, then a row (name, value, what it counts) per count; as JSON, one object of name and value,
    as `Archive.stats()` gives them, and `validly_cited` as `Archive.cited()` (`archiver stats --json | jq .claims`)."""
    from .query.listing import Listing
    from .render.findings import cited_rows
    from .store.views import described

    with open_archive(db, wait, read_only=True) as archive:
        counts = archive.stats()
        cited = archive.cited()
    if fmt == "json":
        emit_json({**counts, "validly_cited": cited})
        return
    rows = cited_rows(cited) + [{"name": n, "value": value, "counts": described(n)} for n, value in counts.items()]
    write_listing(Listing(("name", "value", "counts"), rows), fmt, headers)


@main.group("db", short_help="The archive: schema, check, repair, transfer, a lake's cleanup.")
def db_group() -> None:
    """The archive itself: its schema version and upgrades, integrity check and repair, transfer, a lake's cleanup."""


@db_group.command()
@db_options
def current(db: str | None, wait: float) -> None:
    """Print the archive's schema version."""
    with open_archive(db, wait, read_only=True, upgrade=False) as archive:
        say(archive.version())


@db_group.command(short_help="Apply pending migrations, then remove unrecorded index rows.")
@db_options
@data_path_option
def upgrade(db: str | None, wait: float) -> None:
    """Apply pending migrations, each said on stderr as it begins; then remove the index rows no committed ingest
    recorded (as every open that upgrades does: `db repair`), said in one line on stderr, and make what the writes
    keep (the claim index, the counts, the audit) for the results a migration left pending, each batch of results
    said on stderr."""

    def made(what: str, done: int, total: int) -> None:
        say(f"{what}: {done:,} of {total:,} results made", err=True)

    def applying(migration) -> None:
        say(f"applying {migration.version:04d}_{migration.name}", err=True)

    with open_archive(db, wait, upgrade=False) as archive:
        applied = archive.upgrade(on_batch=made, before=applying)
        for migration in applied:
            say(f"applied {migration.version:04d}_{migration.name}")
        say(f"at version {archive.version()}")
        if archive.healed:
            say_healed_rows(archive)


@db_group.command("transfer", short_help="Transfer every table into another archive (a file or a lake).")
@click.option(
    "--to",
    "target",
    required=True,
    help="The archive to transfer into (a file or ducklake:...); it must hold no sources yet.",
)
@click.option("--to-data-path", help="Where the target lake keeps its Parquet files, when it is new.")
@db_options
def transfer_command(target: str, to_data_path: str | None, db: str | None, wait: float) -> None:
    """Transfer every table of this archive into another: a file into a lake, or a lake into a file.
    This archive is left as it was."""
    with open_archive(db, wait, read_only=True) as archive:
        counts = archive.transfer_to(target, data_path=to_data_path, wait=wait)
    say(f"transferred into {counts.pop('target')}: " + "  ".join(f"{k} {v:,}" for k, v in counts.items()))


# The command's earlier name, kept so that scripts written for it go on working.
db_group.add_command(
    click.Command(
        "copy",
        callback=transfer_command.callback,
        params=transfer_command.params,
        hidden=True,
        help=transfer_command.help,
    )
)


@main.command(short_help="Find uncited results and invalid, untyped or dropped citations.")
@db_options
@report_options(
    AUDIT_FORMATS,
    ("error", "warning", "never"),
    "Exit 1 when a finding at or above this severity exists.",
    "Output format; sarif for code hosts.",
)
@click.option("--rule", "rules", multiple=True, metavar="RULE", help="Run only this rule (repeatable).")
@click.option("--exclude-rule", "exclude_rules", multiple=True, metavar="RULE", help="Skip this rule (repeatable).")
@selection_options
@click.option(
    "--min-base",
    type=click.IntRange(min=1),
    default=MIN_BASE,
    show_default=True,
    help="small-base fires for a base.n below this.",
)
@click.option(
    "--limit", type=click.IntRange(min=0), help="At most this many findings (errors first); the summary counts all."
)
@click.option("--summary", "summary_only", is_flag=True, help="Only the counts: by rule, agent and study (no sarif).")
def audit(db, wait, fmt, headers, fail_on, rules, exclude_rules, min_base, limit, summary_only, **selection) -> None:
    """Find uncited results, invalid, untyped or dropped citations, lost Parts and unreadable records.

    Exit status 1 when a finding at or above --fail-on exists, 0 otherwise: `archiver ingest dumps/ &&
    archiver audit` gates a CI pipeline. The filters choose the stored copies audited (an agent card
    or a quarantined record is audited unless a filter it cannot be judged by is given). Rules: see
    `archiver.audit.RULES` (uncited-result, invalid-citation, citation-type-lost, dropped-part, ...).

    \b
    Examples:
      archiver audit                                 # the summary, then every finding, errors first
      archiver audit --summary                       # the counts by rule, agent and study
      archiver audit --limit 20 --rule uncited-result --agent 'Versant*'
      archiver audit --fail-on warning --format sarif > audit.sarif
    """
    from .errors import UsageError
    from .render.findings import listing, summary_listing

    if summary_only and fmt == "sarif":
        raise UsageError("has no sarif: sarif lists findings (json, jsonl, csv, tsv, markdown, table)", "--summary")
    with (
        open_archive(db, wait, read_only=True) as archive,
        archive.audited(rules, exclude_rules, min_base, **selection) as found,
    ):
        shown = summary_listing(found) if summary_only else listing(found, limit)
        if not write_listing(shown, fmt, headers) and limit != 0:
            tell_unmatched(archive, "no findings", selection, only_unmatched=True)
    sys.exit(1 if found.fails(fail_on) else 0)


def write_listing(listing, fmt: str | None, headers: bool = True) -> int:
    """Write rows, findings or verdicts to stdout in `fmt` (default: table on a terminal, else jsonl);
    how many were written."""
    from .render.formats import write

    out = sys.stdout
    fmt = fmt or ("table" if out.isatty() else "jsonl")
    out.flush()
    count = write(listing, fmt, out.buffer, headers)
    out.buffer.flush()
    return count


MATCHING = "matching is case-sensitive; * is a glob"
"""How a text filter's value matches (`archiver.query.filters`), as the CLI says it and README.md repeats it."""


def tell_unmatched(archive, nothing: str, selection: dict, only_unmatched: bool = False) -> None:
    """On stderr, when a selection found nothing: that it did (`nothing`, e.g. "no claims match"), and
    which text filter values match no stored value, with what they may have meant (`only_unmatched`: say
    nothing unless one does). The exit status stays that of the command (an empty answer is an answer)."""
    phrases = archive.unmatched(**selection)
    if only_unmatched and not phrases:
        return
    note = f" ({MATCHING})" if phrases else ""
    say("; ".join([nothing, *phrases]) + note, err=True)


def run_lineage(name: str, db, wait, fmt, headers, limit, order_by, selection: dict) -> None:
    from .query.limits import LISTING_MEMORY

    with ended_by_signals(), open_archive(db, wait, read_only=True) as archive, archive.bounded(LISTING_MEMORY, 0):
        count = write_listing(getattr(archive, name)(order_by=order_by, limit=limit, **selection), fmt, headers)
        if not count and limit != 0:
            tell_unmatched(archive, f"no {'rows' if name == 'impact' else name} match", selection)


@main.group("query", short_help="What depends on a study, period or column.")
def query_group() -> None:
    """Which claims, citations, tasks, agents and files depend on a study, period or column."""


def _lineage_command(name: str, short: str, summary: str, examples: tuple[str, ...]) -> None:
    """`archiver query NAME`: the rows of `Archive.NAME` that pass the selection."""

    def command(db, wait, fmt, headers, limit, order_by, **selection) -> None:
        run_lineage(name, db, wait, fmt, headers, limit, order_by, selection)

    command.__doc__ = summary + "\n\n\b\nExamples:\n" + "".join(f"  {example}\n" for example in examples)
    query_group.command(name, short_help=short)(selection_options(output_options(db_options(command))))


_lineage_command(
    "citations",
    "Each distinct citation, with what rests on it.",
    "One row per distinct citation, with how many claims, results, tasks and agents rest on it.",
    ("archiver query citations --invalid", "archiver query citations --has-warnings --format csv > citations.csv"),
)
_lineage_command(
    "claims",
    "Each claim and the citation it depends on.",
    "One row per claim and citation it depends on; a claim stored in several copies is one claim.",
    ("archiver query claims --study 'Versant*' --period 'W6*'", "archiver query claims --column s14r5 --json"),
)
_lineage_command(
    "impact",
    "The tasks, agents and files to tell of a correction.",
    "The affected tasks, contexts, agents and source files, with counts: whom to tell of a correction.",
    ("archiver query impact --study 'Versant*' --period 'W6*'", "archiver query impact --column s14r5 --md"),
)


@main.command(short_help="A task, message or context as a person reads it.")
@click.argument("ident", metavar="ID", shell_complete=_archive_values(RESULT_IDS))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "html", "json")),
    default="text",
    show_default=True,
    help="text for a terminal, html one page, json what the web view's /result/ID.json answers.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@click.option("--copy", "copy", metavar="FILE", help="Show each result as stored in this file, not its fullest copy.")
@db_options
def show(ident: str, fmt: str, output: str | None, copy: str | None, db, wait) -> None:
    """A task, message or context as a person reads it: tables of numbers, each with its citations beside.

    \b
    Examples:
      archiver show task-vrs-rpc-funnel
      archiver show task-vrs-rpc-funnel --format html -o funnel.html
      archiver show ctx-versant-rest --format json | jq '.results[].citations'
    """
    from .query.limits import LISTING_MEMORY
    from .store.connection import bounded_memory

    with open_archive(db, wait, read_only=True) as archive, bounded_memory(archive.con, LISTING_MEMORY):
        width = None if output else terminal_width(sys.stdout)
        page = archive.render(ident, fmt, copy, colour=not output and wants_colour(sys.stdout), width=width)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(page)
    else:
        click.echo(page, nl=False)


@main.command(short_help="Export raw records, or the index as Parquet.")
@click.argument("destination", required=False)
@click.option("--raw", is_flag=True, help="Raw records byte for byte: JSON Lines to DESTINATION (or stdout).")
@click.option(
    "--files",
    "files_dir",
    type=click.Path(file_okay=False),
    help="With --raw: re-create the original files under this directory instead.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("parquet",)),
    help="parquet: the index tables under DESTINATION, partitioned by study.",
)
@selection_options
@db_options
def export(destination, raw, files_dir, fmt, db, wait, **selection) -> None:
    """Export raw records (--raw) or the index as Parquet (--format parquet DIR).

    The filters select the records of the matching results, and --source those of the matching files.
    Exporting with --raw --files and ingesting the directory into a new archive gives the same counts
    and the same stored bytes.

    \b
    Examples:
      archiver export --raw --study 'Versant*' > versant.jsonl
      archiver export --raw --files restored/       # the source files, re-created
      archiver export --format parquet lake/         # the index, for DuckDB, Spark or Trino
    """
    if raw == (fmt == "parquet"):
        raise click.UsageError("choose --raw or --format parquet")
    if fmt == "parquet" and not destination:
        raise click.UsageError("--format parquet needs a DESTINATION directory")
    with open_archive(db, wait, read_only=True) as archive:
        if fmt == "parquet":
            written = archive.export(destination, fmt="parquet")
            say(f"wrote {len(written)} tables under {destination}", err=True)
        elif files_dir:
            made = archive.export(files_dir, fmt="files", **selection)
            say(f"re-created {len(made)} files under {files_dir}", err=True)
            count = len(made)
        elif destination and destination != "-":
            count = archive.export(destination, **selection)
            say(f"wrote {count} records to {destination}", err=True)
        else:
            count = archive.export(sys.stdout.buffer, **selection)
        if fmt != "parquet" and not count:
            tell_unmatched(archive, "no records match", selection)


def _named_params(ctx, param, given: tuple[str, ...]) -> dict[str, str]:
    """`-p NAME=VALUE` pairs as the statement's named parameters (`$NAME`)."""
    named = {}
    for pair in given:
        name, equals, value = pair.partition("=")
        if not equals or not name.isidentifier():
            raise click.BadParameter(f"expected NAME=VALUE (NAME a letter or _ then letters, digits, _), got {pair!r}")
        named[name] = value
    return named


@main.command("sql", short_help="Run one read-only SELECT over the archive.")
@click.argument("statement")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    callback=_named_params,
    metavar="NAME=VALUE",
    help="A value for the parameter $NAME of the statement (repeatable); DuckDB casts it as the statement needs.",
)
@click.option(
    "--max-memory",
    type=BYTES,
    default="2GiB",
    show_default=True,
    help="DuckDB's memory for the statement (e.g. 512MiB, 4GB); beyond it, it spills at most 4 times as "
    "much to a temporary folder, then stops.",
)
@click.option(
    "--timeout",
    type=SECONDS,
    default=60,
    show_default=True,
    help="Seconds the statement may run, its rows written included; 0: no limit.",
)
@format_options(OUTPUT_FORMATS)
@db_options
def sql_command(statement, params, max_memory, timeout, fmt, headers, db, wait) -> None:
    """Run one read-only SELECT over the archive (tables and views: `archiver docs query`, "SQL views").

    Statements that write, attach, copy, export, install or load, or change settings are refused, and so
    is any function or table not on the allow-list (`archiver docs query`), or a statement that is not
    UTF-8 text: exit status 2. A statement past --max-memory or --timeout is stopped: exit status 1. Ctrl-C
    stops it within a second: exit status 130.

    \b
    Examples:
      archiver sql "SELECT study, count(*) FROM citation_uses GROUP BY ALL ORDER BY 2 DESC"
      archiver sql 'SELECT study, base_n FROM citation_index WHERE base_n < $n' -p n=30 --format markdown
    """
    with ended_by_signals(), open_archive(db, wait, read_only=True) as archive, archive.bounded(max_memory, timeout):
        write_listing(archive.sql(statement, params or None), fmt, headers)


@main.command(short_help="Re-run the citations' extractors and compare with the claims.")
@click.option(
    "--data-layer",
    "data_layer",
    type=click.Path(dir_okay=False),
    help="The data layer file (default: <archive stem>.datalayer.toml beside the archive, else "
    "archiver-data-layer.toml in the archive's folder).",
)
@click.option("--status", is_flag=True, help="Show the latest stored verdicts and which are stale; run nothing.")
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    help="Relative tolerance for every table (default: the data layer's; without one, claims compare as rounded).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds per extractor run (default: the data layer's, else 60).",
)
@click.option(
    "--resume/--no-resume",
    default=None,
    help="Keep each current verdict (its data layer unchanged) and run only the rest "
    "(default: --resume after an interrupted run, else --no-resume).",
)
@report_options(
    VERIFY_FORMATS,
    ("differs", "not-rerunnable", "stale", "never"),
    "Exit 1 when a verdict this bad (not-rerunnable includes differs, partial and unscoped) exists, or (stale) a "
    "verdict rests on a changed data layer. With --status: never, unless given.",
)
@selection_options
@db_options
def verify(data_layer, status, tolerance, timeout, resume, fmt, headers, fail_on, db, wait, **selection) -> None:
    """Re-run each matching citation's extractor from the data layer and compare with the claims.

    Records a verdict per citation of a result: reproduced, differs (the pointers and both values),
    partial (rows short of the citation's fielded window or base n), unscoped (a scope the table cannot
    apply) or not-rerunnable (the reason). Only functions the data layer declares are run, each in a
    separate process bounded by the timeout. Citations of studies the data layer does not cover are skipped.

    \b
    Examples:
      archiver verify --data-layer sample_transcripts/data-layer/archiver-data-layer.toml
      archiver verify --status                       # which verdicts are stale, and why
      archiver verify --study 'Versant*' --format json
    """
    from .render.verdicts import listing

    with open_archive(db, wait, read_only=status) as archive:
        if status:
            report = archive.verdicts(data_layer, **selection)
        else:
            report = archive.verify(data_layer, tolerance=tolerance, timeout=timeout, resume=resume, **selection)
    write_listing(listing(report), fmt, headers)
    if status and click.get_current_context().get_parameter_source("fail_on") is ParameterSource.DEFAULT:
        fail_on = "never"
    sys.exit(1 if report.fails(fail_on) else 0)


@main.command(short_help="Browse the archive read-only in a web browser.")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on; other than loopback needs a token."
)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port to listen on.")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A file whose first line is the token every request must carry (Authorization: Bearer, or open a "
    "page once with ?token=); required when --host is not loopback (default: $ARCHIVER_SERVE_TOKEN).",
)
@click.option(
    "--token", default=None, help="The token itself (every user of the machine sees it in ps: prefer --token-file)."
)
@click.option(
    "--allow-host",
    multiple=True,
    metavar="NAME",
    help="Also answer requests whose Host is NAME (a reverse proxy's name); repeatable.",
)
@click.option(
    "--access-log",
    is_flag=True,
    help="Print a line per request (method, address, status; a ?token= masked); off by default.",
)
@click.option("--db", envvar="ARCHIVER_DB", default=None, help=DB_HELP)
def serve(
    host: str,
    port: int,
    token_file: Path | None,
    token: str | None,
    allow_host: tuple[str, ...],
    access_log: bool,
    db: str | None,
) -> None:
    """Browse the archive read-only in a web browser: overview, search, results, studies, columns, agents,
    audit findings and verdicts, each page with a JSON twin (the same path with .json). `archiver docs serve`.

    \b
    Examples:
      archiver serve                                 # http://127.0.0.1:8765
      archiver serve --db a.duckdb --port 9000
      archiver serve --host 0.0.0.0 --token-file ~/.archiver-token --allow-host archive.example.com
      archiver serve --access-log                    # a line per request
    """
    from .errors import UsageError
    from .serve import serve as run

    ctx = click.get_current_context()
    ctx.meta["archiver.db"] = db
    if token:
        say(
            "warning: --token shows the token to every user of this machine (ps); "
            "give it with --token-file or $ARCHIVER_SERVE_TOKEN",
            err=True,
            tone="warning",
        )
    try:
        run(db, host, port, token, token_file=token_file, allow_hosts=allow_host, access_log=access_log)
    except UsageError as exc:  # refused before serving: with this command's usage line
        raise click.BadParameter(str(exc), param_hint=f"'{exc.option}'") from None


@db_group.command("check", short_help="Check the archive's integrity.")
@db_options
def check_command(db: str | None, wait: float) -> None:
    """Check the archive's integrity: every index row points to a stored raw record, no file is half
    ingested, counts agree. Exit status 1 with the list of problems, 0 when the archive is consistent; a
    problem of rows no committed ingest wrote says so, and `archiver db repair` removes them."""
    with open_archive(db, wait, read_only=True, refuse_damage=False) as archive:
        problems = archive.check()
        healed = [] if archive.damage else archive.healings()
        counts = None if problems else archive.stats()
    for line in healed:
        say(f"healed: {line}", err=True)
    for problem in problems:
        say(f"problem: {problem}", err=True)
    if problems:
        say(f"{len(problems)} integrity problems", err=True)
        sys.exit(1)
    say(
        f"ok: {counts['sources']:,} sources, {counts['records']:,} records, {counts['copies']:,} stored copies, "
        f"{counts['parts']:,} Parts, {counts['citations']:,} citation Parts, {counts['claims']:,} claims"
    )


@db_group.command("repair", short_help="Remove index rows no committed ingest recorded.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed, and change nothing.")
@db_options
def repair_command(dry_run: bool, db: str | None, wait: float) -> None:
    """Remove the index rows no committed ingest recorded, whatever version of the archiver wrote them: rows
    of file versions without a committed sources row (a killed ingest's, replayed), and parts, citations and
    claims whose stored copy or Part is not indexed; then makes the claim index, the kept counts and the kept
    audit again (what `db check` calls claim-index, kept-counts, counts-sum and kept-audit). Prints what was
    removed per table and file version; re-ingest those files to index them again. Waits for (or is refused
    by) another process writing."""
    with open_archive(db, wait, upgrade=not dry_run, say_healed=False) as archive:
        found = archive.healed + archive.repair(dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for item in found:
        say(f"{verb}: {item}")
    say(removed_line(found, verb) if found else "nothing to repair: every index row belongs to a committed ingest")
    if not dry_run:
        say(f"claim index and kept audit made again: {archive.reindexed:,} results")


@db_group.command("cleanup", short_help="On a lake: remove what writers that died left behind.")
@db_options
def cleanup_command(db: str | None, wait: float) -> None:
    """On a lake: remove what writers that died left behind: their uncommitted file leases and the Parquet
    files the catalog does not list (while another writer is ingesting, only files older than the lease)."""
    with open_archive(db, wait) as archive:
        done = archive.cleanup()
    if done is None:
        say("nothing to clean up: a single DuckDB file keeps nothing outside its transactions")
        return
    for lease in done.leases_expired:
        say(f"released lease: {lease}")
    for path in done.orphans_deleted + done.old_files_deleted:
        say(f"deleted: {path}")
    if done.orphans_kept:
        say(f"note: {done.orphans_kept}", err=True)
    say(
        f"{len(done.leases_expired)} leases released, "
        f"{len(done.orphans_deleted) + len(done.old_files_deleted)} files deleted"
    )


def _listen(_ctx, _param, value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value} is not HOST:PORT (e.g. {record_defaults.HOST}:{record_defaults.PORT})")
    return host.strip("[]"), int(port)


def _bytes_option(name: str, default: int, text: str):
    """A size in bytes (1 or more) of `archiver record`, its default shown."""
    return click.option(name, type=click.IntRange(1), default=default, show_default=True, help=text)


@main.command(short_help="Record an A2A agent's traffic through a proxy.")
@click.option(
    "--upstream",
    required=True,
    metavar="URL",
    help="The A2A agent to forward to (http://host:port); its credential: $ARCHIVER_UPSTREAM_AUTHORIZATION.",
)
@click.option(
    "--listen",
    default=f"{record_defaults.HOST}:{record_defaults.PORT}",
    show_default=True,
    callback=_listen,
    metavar="HOST:PORT",
    help="Where the proxy takes the clients' requests.",
)
@click.option(
    "--spool",
    type=click.Path(file_okay=False, path_type=Path),
    default="spool",
    show_default=True,
    help="The folder of segment files the traffic is recorded in.",
)
@click.option("--db", default=None, help="Also ingest each closed segment into this archive, from this process.")
@click.option("--wait", type=SECONDS, default=1.0, show_default=True, help="Seconds to wait for a locked archive.")
@_bytes_option("--segment-bytes", record_defaults.SEGMENT_BYTES, "A segment is closed at this size.")
@click.option(
    "--segment-seconds",
    type=click.FloatRange(0.01),
    default=record_defaults.SEGMENT_SECONDS,
    show_default=True,
    help="A segment is closed this long after it was opened.",
)
@_bytes_option(
    "--record-max-bytes",
    record_defaults.RECORD_MAX_BYTES,
    "A body or stream event larger than this is forwarded whole but not recorded.",
)
@_bytes_option(
    "--decode-max-bytes",
    record_defaults.DECODE_MAX_BYTES,
    "A compressed stream is read for its events up to this many decoded bytes, then only forwarded.",
)
@click.option(
    "--rewrite-card",
    is_flag=True,
    help="Rewrite the agent card's URLs to the proxy's (--public-url, else http://HOST:PORT of --listen).",
)
@click.option("--public-url", default=None, metavar="URL", help="The proxy's URL as clients reach it.")
@click.option(
    "--alerts",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append one JSON line per Citations v1 violation found in a completed result.",
)
@click.option(
    "--connect-timeout",
    type=SECONDS,
    default=record_defaults.CONNECT_TIMEOUT,
    show_default=True,
    help="Seconds to reach the upstream.",
)
@click.option(
    "--read-timeout",
    type=SECONDS,
    default=record_defaults.READ_TIMEOUT,
    show_default=True,
    help="Seconds the upstream may stay silent (between two chunks of a stream too); 0: no limit.",
)
@click.option(
    "--durable",
    is_flag=True,
    help="Write and fsync each completed exchange before the last byte of its response reaches the client.",
)
def record(upstream, listen, spool, db, wait, segment_bytes, segment_seconds, record_max_bytes, decode_max_bytes,
           rewrite_card, public_url, alerts, connect_timeout, read_timeout, durable) -> None:  # fmt: skip
    """Serve a recording proxy in front of the A2A agent at --upstream.

    Every request and response passes unchanged (streams as they arrive) and is recorded in the spool's
    segment files; /-/health and /-/metrics (Prometheus) are the proxy's own. Details: `archiver docs record`.

    \b
    Examples:
      archiver record --upstream http://127.0.0.1:9999 --spool spool/
      archiver record --upstream http://agent:9999 --spool spool/ --db a.duckdb   # ingests as it records
    """
    from .record.serve import RecordOptions, serve

    host, port = listen
    options = RecordOptions(
        upstream,
        spool,
        host,
        port,
        segment_bytes,
        segment_seconds,
        record_max_bytes,
        rewrite_card,
        public_url,
        alerts,
        db,
        wait,
        connect_timeout,
        read_timeout or None,
        durable,
        decode_max_bytes,
    )
    serve(options)


@main.command(name="docs", short_help="The manual: its pages, or the page on TOPIC.")
@click.argument("topic", required=False, shell_complete=lambda ctx, param, incomplete: _topics(incomplete))
def docs_command(topic: str | None) -> None:
    """The manual: the list of its pages, or the page on TOPIC (cli, query, audit, verify, ...) as Markdown, in
    a pager ($PAGER) on a terminal.

    \b
    Examples:
      archiver docs                 # the pages, each with its title
      archiver docs verify          # how verify judges a citation
    """
    from .manual import pages, title

    found = pages()
    if topic is None:
        width = max(map(len, found))
        click.echo("".join(f"{name.ljust(width)}  {title(text)}\n" for name, text in found.items()), nl=False)
    elif topic.removesuffix(".md") in found:
        page = found[topic.removesuffix(".md")]
        click.echo_via_pager(page.removesuffix("\n"))  # a pager on a terminal ($PAGER), else plain; it ends the line
    else:
        raise click.BadParameter(f"no page {topic!r}; the pages: {', '.join(found)}", param_hint="TOPIC")


def _topics(incomplete: str) -> list:
    from .manual import pages

    return [CompletionItem(name) for name in pages() if name.startswith(incomplete)]


def run() -> None:
    """The `archiver` command's process (`archiver`, `python -m archiver`).

    It goes without pandas and numpy (`processes.without_pandas`), and so do its ingest workers."""
    from .processes import without_pandas

    without_pandas()
    main()
