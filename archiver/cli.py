"""The command line: a thin face over `archiver.Archive`. Heavy modules load lazily."""
from __future__ import annotations

import sys

import click

DB_HELP = "Archive file (default: $ARCHIVER_DB, else ./archive.duckdb)."
WAIT_HELP = "Seconds to wait while another process holds the archive."


def db_options(func):
    func = click.option("--wait", type=float, default=5.0, show_default=True, help=WAIT_HELP)(func)
    return click.option("--db", envvar="ARCHIVER_DB", default=None, help=DB_HELP)(func)


def open_archive(db: str | None, wait: float, read_only: bool = False):
    from .archive import Archive
    from .store.connection import ArchiveBusy

    try:
        return Archive.open(db, read_only=read_only, wait=wait)
    except (ArchiveBusy, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None


def emit_json(value) -> None:
    import orjson

    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="archiver")
def main() -> None:
    """Archive A2A transcripts and hold their Citations v1 claims to account."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@db_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def ingest(paths: tuple[str, ...], db: str | None, wait: float, as_json: bool) -> None:
    """Ingest files, directories, globs or - (stdin) into the archive.

    Exit status 1 when any record was quarantined (the good records are stored).
    """
    from .progress import Progress

    with open_archive(db, wait) as archive, Progress() as progress:
        try:
            summary = archive.ingest(paths, on_file=progress.update)
        except FileNotFoundError as exc:
            raise click.ClickException(str(exc)) from None
    for problem in summary.problems:
        click.echo(f"quarantined: {problem}", err=True)
    for path in summary.unrecognised_files:
        click.secho(f"warning: {path}: no A2A object recognised in this file", fg="yellow", err=True)
    if as_json:
        emit_json(summary.as_dict())
    else:
        click.echo(render_summary(summary))
    sys.exit(1 if summary.quarantined else 0)


def render_summary(summary) -> str:
    lines = [
        f"files {summary.files} ({summary.files_unchanged} unchanged)  records {summary.records}  "
        f"duplicates skipped {summary.duplicates_skipped}  quarantined {summary.quarantined}",
        f"archive now holds: tasks {summary.tasks}  results {summary.results} ({summary.copies} stored copies)  "
        f"parts {summary.parts}  citations {summary.citations}  claims {summary.claims}  "
        f"agent cards {summary.agent_cards}  error responses {summary.error_responses}",
    ]
    return "\n".join(lines)


@main.command()
@db_options
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def stats(db: str | None, wait: float, as_json: bool) -> None:
    """Print the archive's counts."""
    with open_archive(db, wait, read_only=True) as archive:
        counts = archive.stats()
    if as_json:
        emit_json(counts)
    else:
        width = max(map(len, counts))
        for name, value in counts.items():
            click.echo(f"{name.replace('_', ' '):<{width}}  {value:>10,}")


@main.group("db")
def db_group() -> None:
    """The archive's schema: its version and upgrades."""


@db_group.command()
@db_options
def current(db: str | None, wait: float) -> None:
    """Print the archive's schema version."""
    from .archive import Archive

    with Archive.open(db, read_only=True, wait=wait, upgrade=False) as archive:
        click.echo(archive.version())


@db_group.command()
@db_options
def upgrade(db: str | None, wait: float) -> None:
    """Apply pending migrations."""
    from .archive import Archive

    with Archive.open(db, wait=wait, upgrade=False) as archive:
        applied = archive.upgrade()
        for migration in applied:
            click.echo(f"applied {migration.version:04d}_{migration.name}")
        click.echo(f"at version {archive.version()}")
