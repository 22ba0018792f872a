"""Issue 40's questions, asked of an archive scaled to N claims by every side of a run, each row beside its
target (the 10M targets below `BIG` claims, the 100M ones from there on):

- `task`: one task's claims (`query claims --task T`, T a task of one result) against `--help`;
- `count`: `count(*)` of the claims counted once (`COUNT_ONCE`) against `--help`;
- `column`: the busiest column's claims as JSON, time and peak RSS, against DuckDB alone writing as many
  rows (the same answer, loaded into a table of its own beforehand) with `COPY ... TO` as one JSON array;
- `audit`: `audit --format json`, time and peak RSS;
- `summary`: `audit --summary` (the counts by rule) against `--help`;
- `serve`: `archiver serve`'s first answer after its start, and the slowest first answer of a fixed list of
  pages (`serve_load.pages`), each the median of `runs` starts;
- `impact` and `rare` (not issue 40's; by name only): `query impact --study` and a column of 0.1% of claims.

Every command is stopped at the run's `Bound` (time or memory) and recorded as stopped; a side stopped once
is not asked that question again. Wall times include the process's start, as a user waits for it.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .common import Bound, BoundExceededError, Side, fresh, timed
from .generate import RARE_COLUMN
from .serve_load import after_start, pages

COUNT_ONCE = "SELECT count(*) FROM claim_citations"
BIG = 30_000_000
ROWS = ("task", "count", "column", "audit", "summary", "serve")
MORE = ("impact", "rare")
MiB = 2**20


@dataclass(frozen=True)
class Asked:
    """One side's answer to one question: median wall seconds, the largest peak RSS of its runs, its output."""

    seconds: float
    peak: int
    out: str


Answer = Asked | str  # a str: the cell of a command stopped at its bound


@dataclass(frozen=True)
class Chosen:
    """What the questions are about, chosen once on the unscaled archive: a task of one result, the column
    holding the most claims, and the study holding most of that column's claims."""

    task: str
    column: str
    study: str


def chosen(db: Path) -> Chosen:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        (task,) = con.execute(
            "SELECT task_id FROM results WHERE claims > 0 AND task_id IS NOT NULL "
            "GROUP BY task_id HAVING count(*) = 1 ORDER BY task_id LIMIT 1"
        ).fetchone()
        column, study = con.execute(
            "SELECT source_column, arg_max(study, n) FROM (SELECT source_column, study, count(*) AS n "
            "FROM claim_citations WHERE source_column IS NOT NULL GROUP BY ALL) "
            "GROUP BY source_column ORDER BY sum(n) DESC LIMIT 1"
        ).fetchone()
    return Chosen(task, column, study)


@dataclass
class Scaled:
    """One scale of a run: each side's scaled archive and `--help` time, and what the rows need to ask."""

    dbs: dict[Side, Path]
    claims: int
    help_s: dict[Side, float]
    about: Chosen
    bound: Bound
    runs: int
    work: Path

    @property
    def label(self) -> str:
        return f"{self.claims / 1e6:,.1f}M claims"

    @property
    def big(self) -> bool:
        return self.claims >= BIG

    def asked(self, *question: str) -> dict[Side, Answer]:
        return interleaved({side: [*question, "--db", str(db)] for side, db in self.dbs.items()}, self.runs, self.bound)


def interleaved(commands: dict[Side, list[str]], runs: int, bound: Bound | None = None) -> dict[Side, Answer]:
    """Each side's answer to one question, the sides taking turns `runs` times; a side stopped at the bound
    is not asked again."""
    times: dict[Side, list[float]] = {side: [] for side in commands}
    peaks: dict[Side, int] = dict.fromkeys(commands, 0)
    outs: dict[Side, str] = {}
    stopped: dict[Side, str] = {}
    for turn in range(runs):
        for side, args in commands.items():
            if side in stopped:
                continue
            try:
                seconds, peak, out = side.run(*args, sample_memory=turn == 0, bound=bound)
            except BoundExceededError as exceeded:
                stopped[side] = str(exceeded)
                continue
            times[side].append(seconds)
            peaks[side] = max(peaks[side], peak)
            outs.setdefault(side, out)
    return {
        side: stopped.get(side) or Asked(statistics.median(times[side]), peaks[side], outs[side]) for side in commands
    }


def cell(answer: Answer, reference: float = 0.0, of: str = "", limit: float = 0.0, rss: int = 0) -> str:
    """An answer as the table shows it: seconds, the ratio to `reference` (judged against `limit`), peak RSS
    (judged against `rss` bytes when given)."""
    if isinstance(answer, str):
        return answer
    text = f"{answer.seconds:,.2f} s"
    misses = []
    if reference:
        ratio = answer.seconds / reference
        text += f" = {ratio:,.1f}x {of}"
        misses += [limit and ratio > limit]
    elif limit:
        misses += [answer.seconds > limit]
    text += f" ({answer.peak / MiB:,.0f} MiB peak)"
    misses += [rss and answer.peak >= rss]
    return text + (", missed" if any(misses) else ", met" if limit or rss else "")


def task(scale: Scaled, table) -> None:
    limit = 3 if scale.big else 2
    answers = scale.asked("query", "claims", "--task", scale.about.task, "--format", "json")
    table.add(
        f"one task's claims: query claims --task ({scale.label})",
        {s: cell(a, scale.help_s[s], "--help", limit) for s, a in answers.items()},
        f"target <= {limit}x --help",
    )


def count(scale: Scaled, table) -> None:
    limit = 5 if scale.big else 3
    answers = scale.asked("sql", COUNT_ONCE, "--format", "json")
    table.add(
        f"count(*) of claims counted once ({scale.label})",
        {s: cell(a, scale.help_s[s], "--help", limit) for s, a in answers.items()},
        f"target <= {limit}x --help; `sql {COUNT_ONCE!r}`",
    )


def column(scale: Scaled, table) -> None:
    answers = scale.asked("query", "claims", "--column", scale.about.column, "--format", "json")
    answered = next((a.out for a in answers.values() if isinstance(a, Asked)), None)
    copy_s, rows = copy_of(answered, scale.work, scale.runs) if answered else (0.0, 0)
    rss = 2 * 2**30 if scale.big else 0
    table.add(
        f"busiest column as JSON, {rows:,} rows ({scale.label})",
        {s: cell(a, copy_s, "COPY", 1.5, rss) for s, a in answers.items()},
        f"target <= 1.5x DuckDB `COPY` of as many rows ({copy_s:,.2f} s, process start included)"
        + (", RSS < 2 GiB" if rss else ""),
    )


def audit(scale: Scaled, table) -> None:
    limit, rss = (120, 2 * 2**30) if scale.big else (15, 2**30)
    answers = scale.asked("audit", "--format", "json", "--fail-on", "never")
    table.add(
        f"audit --format json ({scale.label})",
        {s: cell(a, limit=limit, rss=rss) for s, a in answers.items()},
        f"target <= {limit} s, < {rss // 2**30} GiB",
    )


def summary(scale: Scaled, table) -> None:
    limit = 5 if scale.big else 3
    answers = scale.asked("audit", "--summary", "--fail-on", "never")
    table.add(
        f"audit --summary ({scale.label})",
        {s: cell(a, scale.help_s[s], "--help", limit) for s, a in answers.items()},
        f"target <= {limit}x --help",
    )


def serve(scale: Scaled, table) -> None:
    """The first answer after start and the slowest page's first answer, each a median over `runs` starts
    of the server (a side stopped at the bound is not started again)."""
    addresses = pages(scale.about.column, scale.about.study)
    page_limit = 0.5 if scale.big else 0.3
    firsts, slowest = {}, {}
    for side, db in scale.dbs.items():
        starts = []
        for _ in range(scale.runs):
            starts.append(after_start(side, db, addresses, scale.bound))
            if isinstance(starts[-1][0], str) or any(isinstance(v, str) for v in starts[-1][1].values()):
                break
        firsts[side] = _median_or_stopped([first for first, _ in starts])
        per_page = {
            kind: _median_or_stopped([answered.get(kind, "not asked") for _, answered in starts]) for kind in addresses
        }
        slowest[side] = _slowest(per_page, page_limit)
    table.add(
        f"serve: first answer after start ({scale.label})",
        {s: v if isinstance(v, str) else f"{v:,.2f} s" + (", met" if v < 1 else ", missed") for s, v in firsts.items()},
        "target < 1 s (the overview, process start included)",
    )
    table.add(
        f"serve: slowest page's first answer ({scale.label})",
        slowest,
        f"target < {page_limit * 1000:,.0f} ms; pages: {', '.join(addresses)}",
    )


def _median_or_stopped(values: list[float | str]) -> float | str:
    stopped = [v for v in values if isinstance(v, str)]
    return stopped[0] if stopped else statistics.median(values)


def _slowest(per_page: dict[str, float | str], limit: float) -> str:
    stopped = [f"{kind} {v}" for kind, v in per_page.items() if isinstance(v, str) and v != "not asked"]
    if stopped:
        return stopped[0]
    kind = max(per_page, key=per_page.get)
    return f"{per_page[kind] * 1000:,.0f} ms ({kind})" + (", missed" if per_page[kind] >= limit else ", met")


def impact(scale: Scaled, table) -> None:
    answers = scale.asked("query", "impact", "--study", scale.about.study, "--format", "json")
    table.add(f"query impact --study ({scale.label})", {s: cell(a) for s, a in answers.items()})


def rare(scale: Scaled, table) -> None:
    answers = scale.asked("query", "claims", "--column", RARE_COLUMN, "--format", "jsonl")
    table.add(
        f"query claims --column, 0.1% of claims ({scale.label})",
        {s: cell(a, scale.help_s[s], "--help", 5) for s, a in answers.items()},
        "target <= 5x --help",
    )


ASK: dict[str, Callable[[Scaled, object], None]] = {
    "task": task,
    "count": count,
    "column": column,
    "audit": audit,
    "summary": summary,
    "serve": serve,
    "impact": impact,
    "rare": rare,
}


def copy_of(rows_json: str, work: Path, runs: int) -> tuple[float, int]:
    """Median seconds for DuckDB alone, in a process of its own, to write the rows of `rows_json` (a JSON
    array, loaded beforehand into a table of an archive of its own) as one JSON array; and how many."""
    import duckdb

    source, db, out = work / "column-rows.json", fresh(work / "column-rows.duckdb"), work / "column-copy.json"
    source.write_text(rows_json)
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE answer AS SELECT * FROM read_json(?, format = 'array')", [str(source)])
        (rows,) = con.execute("SELECT count(*) FROM answer").fetchone()
    source.unlink()
    code = (
        "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
        "con.execute('SET enable_progress_bar = false'); "
        "con.execute('COPY answer TO ' + repr(sys.argv[2]) + ' (FORMAT json, ARRAY true)')"
    )
    seconds = statistics.median(timed([sys.executable, "-c", code, str(db), str(out)])[0] for _ in range(runs))
    out.unlink(missing_ok=True)
    fresh(db).unlink(missing_ok=True)
    return seconds, rows
