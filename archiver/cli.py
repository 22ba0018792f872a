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
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Parsing processes (default: one per core, at most 8).")
def ingest(paths: tuple[str, ...], db: str | None, wait: float, as_json: bool, workers: int | None) -> None:
    """Ingest files, directories, globs or - (stdin) into the archive.

    Exit status 1 when any record was quarantined (the good records are stored).
    """
    from .progress import Progress

    with open_archive(db, wait) as archive, Progress() as progress:
        try:
            summary = archive.ingest(paths, on_file=progress.update, workers=workers)
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


@main.command()
@db_options
@click.option("--format", "fmt", type=click.Choice(["table", "json", "jsonl", "sarif"]), default="table",
              show_default=True, help="Output format; sarif for code hosts.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "never"]), default="error", show_default=True,
              help="Exit 1 when a finding at or above this severity exists.")
@click.option("--rule", "rules", multiple=True, metavar="RULE", help="Run only this rule (repeatable).")
@click.option("--exclude-rule", "exclude_rules", multiple=True, metavar="RULE", help="Skip this rule (repeatable).")
@click.option("--agent", help="Only results of this agent (its agent card's name).")
@click.option("--study", help="Only results citing this study.")
@click.option("--since", help="Only results at or after this date or ISO-8601 timestamp.")
@click.option("--until", help="Only results before this timestamp, or up to the end of this date.")
@click.option("--source", "sources", multiple=True, help="Only this file, directory or glob (repeatable).")
@click.option("--min-base", type=click.IntRange(min=1), default=30, show_default=True,
              help="small-base fires for a base.n below this.")
def audit(db: str | None, wait: float, fmt: str, fail_on: str, rules: tuple[str, ...],
          exclude_rules: tuple[str, ...], agent: str | None, study: str | None, since: str | None,
          until: str | None, sources: tuple[str, ...], min_base: int) -> None:
    """Find uncited results, invalid, untyped or dropped citations, lost Parts and unreadable records.

    Exit status 1 when a finding at or above --fail-on exists, 0 otherwise: `archiver ingest dumps/ &&
    archiver audit` gates a CI pipeline.
    """
    from .audit import parse_moment, select_rules
    from .audit.render import render

    try:
        select_rules(rules, exclude_rules)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--rule/--exclude-rule") from None
    moments = {}
    for name, text in (("since", since), ("until", until)):
        try:
            moments[name] = parse_moment(text, end_of_day=name == "until") if text else None
        except ValueError:
            raise click.BadParameter(f"{text!r} is not an ISO-8601 date or timestamp", param_hint=f"--{name}") from None
    with open_archive(db, wait, read_only=True) as archive:
        report = archive.audit(rules=rules, exclude_rules=exclude_rules, agent=agent, study=study,
                               source=sources, min_base=min_base, **moments)
    output = render(report, fmt)
    if output:
        click.echo(output)
    sys.exit(1 if report.fails(fail_on) else 0)
