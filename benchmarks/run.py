"""The benchmark behind `benchmarks/run`: every figure beside a baseline measured in the same run.

Figures: ingest throughput against the orjson parse floor of the same records; peak resident
memory of the whole ingest process tree (summed RSS from /proc, sampled every 250 ms); re-ingest of
the unchanged corpus; an SDK-shaped corpus (`sdk_shaped`) against its own parse floor; many
one-record files against the same records in one file (`small_files`); `query claims --column`
(the busiest column beside DuckDB's own `COPY` of the same query, and a column holding 0.1% of claims
beside `--help`), `query impact --study`, `audit` and `count(*) FROM claim_citations` wall time,
process start included, on archives scaled to 1M and 10M claims; `archiver --help` cold start; and
the same citation extraction written by hand with DuckDB's `read_json` over the JSON Lines files.
With `--baseline REV`, revision REV is installed in a virtual environment of its own and measured
beside the working tree, the two taking turns, so that every speed-up is a ratio of one run.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

from . import questions, sdk_shaped
from .common import HERE, ROOT, Bound, Side, baseline, corpus_for, fresh, ingest_time, timed
from .generate import MEDIA_TYPE
from .scale import scale_archive


def payloads(corpus: Path) -> list[bytes]:
    """Every JSON text of every record, split out before the clock starts: the records ingest's `prepare`
    reads, an SSE event as its data (`event_data`, as the recording proxy reads one). (Imported here: a
    baseline's interpreter imports this module to scale its archive, and an older revision has no core.)"""
    import duckdb

    from archiver.load.schemas import arrow_schemas
    from archiver.prepare import prepare
    from archiver.read.containers import SourceFile, is_sqlite, sqlite_rows
    from archiver.read.version import SourceVersion
    from archiver.record.wire import event_data
    from archiver.store import migrations

    con = duckdb.connect()
    migrations.upgrade(con)
    schemas = arrow_schemas(con)
    found = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.name in ("truth.json", ".archiverignore"):
            continue
        source = SourceFile(str(path))
        if is_sqlite(source):
            for _, row, *_ in sqlite_rows(source):  # (locator, JSON text, why unreadable)
                cells = orjson.loads(row)
                found += [cells[k].encode() for k in ("status", "artifacts", "history") if cells.get(k)]
            continue
        version = SourceVersion(str(path), "0" * 64, path.stat().st_size, "0" * 64, str(path))
        (prepared,) = prepare([(source, version)], schemas)
        try:
            text = event_data if prepared.outcome.container in ("sse", "spool-sse") else bytes
            for name, table in prepared.tables:
                if name == "records":
                    kinds, raws = table.column("kind").to_pylist(), table.column("raw").to_pylist()
                    found += [text(raw) for kind, raw in zip(kinds, raws, strict=True) if kind == "json"]
        finally:
            prepared.discard()
    return found


def parse_floor(texts: list[bytes], repeat: int = 3) -> float:
    """Median seconds for orjson alone to decode every record, in one process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            orjson.loads(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def read_json_baseline(corpus: Path) -> tuple[float, int]:
    """Citation Parts found by DuckDB's own read_json over the JSON Lines files, and the seconds it took."""
    import duckdb

    con = duckdb.connect()
    pattern = str(corpus / "**" / "*.jsonl")
    sql = f"""
        WITH docs AS (SELECT json FROM read_ndjson_objects('{pattern}')),
        tasks AS (
            SELECT coalesce(json -> '$.result.task', json -> '$.task',
                            CASE WHEN json ->> '$.result.kind' = 'task' THEN json -> '$.result' END) AS task
            FROM docs),
        parts AS (
            SELECT unnest(CAST(json_extract(task, '$.artifacts[*].parts[*]') AS JSON[])) AS part
            FROM tasks WHERE task IS NOT NULL)
        SELECT count(*) FROM parts
        WHERE coalesce(part ->> 'mediaType', part -> 'metadata' ->> 'mediaType') = '{MEDIA_TYPE}'
          AND json_extract_string(coalesce(part -> '$.data.data', part -> '$.data'), '$.study') IS NOT NULL
    """
    start = time.perf_counter()
    found = con.execute(sql).fetchone()[0]
    return time.perf_counter() - start, found


def scaled(side: Side, source_db: Path, target_db: Path, claims: int) -> int:
    """`scale_archive` run by the side's own archiver, so that the scaled archive has its schema."""
    if side is HERE:
        return scale_archive(source_db, target_db, claims)
    code = (
        f"import sys; sys.path.append({str(ROOT)!r}); from pathlib import Path; "
        f"from benchmarks.scale import scale_archive; "
        f"print(scale_archive(Path({str(source_db)!r}), Path({str(target_db)!r}), {claims}))"
    )
    done = subprocess.run([side.python, "-c", code], cwd=side.cwd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"scaling with {side.name} failed: {done.stderr[-2000:]}")
    return int(done.stdout.split()[-1])


class Table:
    """The run's figures: one column per side measured, then the baseline or target."""

    def __init__(self, sides: list[Side]) -> None:
        self.sides, self.rows = sides, []

    def add(self, measure: str, values: dict[Side, str] | str, reference: str = "") -> None:
        if isinstance(values, str):
            values = {HERE: values}
        self.rows.append((measure, [values.get(side, "") for side in self.sides], reference))

    def markdown(self) -> list[str]:
        names = " | ".join(side.name if side is HERE else f"baseline {side.name}" for side in self.sides)
        lines = [f"| measure | {names} | reference / target |", "|---" * (len(self.sides) + 2) + "|"]
        return lines + [f"| {m} | {' | '.join(values)} | {r} |" for m, values, r in self.rows]


CORPUS_ROWS = ("ingest", "sdk", "small-files", "jsonl", "help")
ISSUE_40 = ("ingest", *questions.ROWS, "help")
EVERY = (*CORPUS_ROWS, *questions.ROWS, *questions.MORE)


def chosen_rows(text: str) -> tuple[str, ...]:
    """`--rows`: names from `EVERY`, comma-separated; `all` for every one."""
    names = EVERY if text == "all" else tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in EVERY]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown rows {', '.join(unknown)}; rows: {', '.join(EVERY)}, all")
    return names


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="archiver benchmarks")
    parser.add_argument("--tasks", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "corpus")
    parser.add_argument("--scales", default="10000000,100000000", help="claims in the scaled query archives")
    parser.add_argument(
        "--rows",
        type=chosen_rows,
        default=ISSUE_40,
        help=f"rows measured, comma-separated, of: {', '.join(EVERY)}; or all (default: issue 40's rows, "
        f"{', '.join(ISSUE_40)})",
    )
    parser.add_argument("--baseline", metavar="REV", help="a revision measured beside the working tree in this run")
    parser.add_argument("--sdk-copies", type=int, default=300, help="copies of the samples in the SDK-shaped corpus")
    parser.add_argument("--small-files", type=int, default=10000, help="one-record files in the small-files row")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is quoted)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a question may take before it is killed")
    parser.add_argument("--max-rss", type=float, default=16.0, help="GiB a question may hold before it is killed")
    parser.add_argument(
        "--keep-scaled",
        action="store_true",
        help="keep the scaled archives, and reuse kept ones newer than their source",
    )
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    parser.add_argument("--label", default="", help="said in the run's heading in RESULTS.md (what was measured)")
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    return args


def main() -> None:
    args = arguments()
    compiled(ROOT / "archiver")
    sides = [HERE] + ([baseline(args.baseline, args.work)] if args.baseline else [])
    table = Table(sides)
    corpus, truth = corpus_for(args.tasks, args.seed, args.work)
    dbs = {side: args.work / f"bench-{args.tasks}-{side.name}.duckdb" for side in sides}
    if "ingest" in args.rows:
        ingest_rows(table, sides, corpus, truth, dbs, args.runs)
    for side, db in dbs.items():  # the source of the scaled archives, ingested once when not measured
        if not db.exists():
            side.run("ingest", str(corpus), "--db", str(db), "--json")
    if "sdk" in args.rows:
        sdk_row(table, sides, args.work, args.sdk_copies, args.runs)
    if "small-files" in args.rows:
        small_files_row(table, sides, corpus, args.work, args.small_files, args.runs)
    if "jsonl" in args.rows:
        jsonl_row(table, corpus, args.work)
    help_s = {side: statistics.median(side.run("--help")[0] for _ in range(5)) for side in sides}
    scaled_rows(table, args, dbs, help_s)
    if "help" in args.rows:
        bare_s = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
        table.add(
            "archiver --help cold start",
            {s: f"{t:.2f} s" for s, t in help_s.items()},
            f"bare python {bare_s:.2f} s; target < 0.3 s",
        )
    write(args, table)


def compiled(package: Path) -> None:
    """The working tree's modules compiled to bytecode before any run, as `pip install` compiles a baseline's:
    where bytecode is not written (PYTHONDONTWRITEBYTECODE, as on this project's machines), every command of an
    editable tree compiled its modules again, 0.06 s a start that an installed archiver never spends."""
    compileall.compile_dir(str(package), quiet=1)


def scaled_rows(table: Table, args: argparse.Namespace, dbs: dict[Side, Path], help_s: dict[Side, float]) -> None:
    """The questions of `--rows` at each of `--scales`, on archives scaled from each side's ingested one."""
    asked = [name for name in args.rows if name in questions.ASK]
    about = questions.chosen(dbs[HERE]) if asked else None
    bound = Bound(args.timeout, int(args.max_rss * 2**30))
    for wanted in [int(x) for x in args.scales.split(",") if x] if asked else []:
        scaled_dbs = {side: args.work / f"bench-{args.tasks}-{side.name}-{wanted}.duckdb" for side in dbs}
        claims = {side: kept_or_scaled(side, dbs[side], scaled_dbs[side], wanted, args.keep_scaled) for side in dbs}
        for side, db in scaled_dbs.items():  # a warm file cache for every timed run
            side.run("sql", "SELECT count(*) FROM claims", "--db", str(db))
        kept_row(table, scaled_dbs[HERE], claims[HERE])
        scale = questions.Scaled(scaled_dbs, claims[HERE], help_s, about, bound, args.runs, args.work)
        for name in asked:
            questions.ASK[name](scale, table)
        if not args.keep_scaled:
            for path in scaled_dbs.values():
                fresh(path).unlink(missing_ok=True)


def kept_row(table: Table, db: Path, claims: int) -> None:
    """Whether the scaled archive's kept tables (the claim index, the kept audit) are their definitions' rows,
    as `archiver db check` compares them on its sample of results (with every other check)."""
    seconds, _, out = HERE.run("db", "check", "--db", str(db))
    table.add(
        f"kept tables equal their definition ({claims / 1e6:,.1f}M claims)",
        f"equal ({seconds:.0f} s)" if out.startswith("ok:") else "differ: run `archiver db check`",
        "`db check`: claim-index and kept-audit on a sample of 2,000 results",
    )


def kept_or_scaled(side: Side, source_db: Path, target_db: Path, claims: int, keep: bool) -> int:
    """The scaled archive's claims: a kept one reused when newer than its source, else scaled anew."""
    if keep and target_db.exists() and target_db.stat().st_mtime > source_db.stat().st_mtime:
        return int(side.run("sql", "SELECT count(*) AS n FROM claims", "--db", str(target_db), "--csv")[2].split()[-1])
    return scaled(side, source_db, target_db, claims)


def write(args: argparse.Namespace, table: Table) -> None:
    machine = (
        f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    command = " ".join(["benchmarks/run", *sys.argv[1:]])
    text = "\n".join([f"`{command}` on {machine}", "", *table.markdown(), ""])
    print(text)
    title = ", ".join(
        [f"tasks {args.tasks:,}", *([f"beside {args.baseline}"] if args.baseline else []), time.strftime("%Y-%m-%d")]
        + ([args.label] if args.label else [])
    )
    args.results.write_text(_merge(args.results, title, text))


def ingest_rows(table: Table, sides: list[Side], corpus: Path, truth: dict, dbs: dict[Side, Path], runs: int) -> None:
    """Ingest against the parse floor and (with a baseline) against the baseline, medians of `runs` fresh
    ingests, the sides taking turns; peak RSS of the first; re-ingest of the unchanged corpus."""
    size = truth["bytes"]
    texts = payloads(corpus)
    floor = parse_floor(texts)
    table.add(
        "corpus",
        f"{size / 1e6:,.0f} MB, {len(texts):,} records, {truth['tasks']:,} results, {truth['claims']:,} claims",
    )
    times: dict[Side, list[float]] = {side: [] for side in sides}
    peaks: dict[Side, int] = {}
    for turn in range(runs):
        for side in sides:
            seconds, peak, out = side.run(
                "ingest", str(corpus), "--db", str(fresh(dbs[side])), "--json", sample_memory=turn == 0
            )
            summary = json.loads(out)
            assert (summary["citations"], summary["claims"]) == (truth["citations"], truth["claims"]), (side, summary)
            times[side].append(seconds)
            peaks.setdefault(side, peak)
    seconds = {side: statistics.median(t) for side, t in times.items()}
    table.add(
        "ingest wall time",
        {s: f"{t:,.1f} s" for s, t in seconds.items()},
        f"parse floor {floor:,.2f} s (orjson, one process)",
    )
    for side in sides[1:]:
        table.add(
            f"ingest / baseline {side.name}",
            f"{seconds[HERE] / seconds[side]:,.2f}x"
            + (", met" if seconds[HERE] <= 1.15 * seconds[side] else ", missed"),
            f"target <= 1.15x (issue 40, the 2 GB benchmark: --tasks 1800000); medians of {runs}",
        )
    table.add(
        "ingest throughput",
        {s: f"{size / 1e6 / t:,.1f} MB/s, {len(texts) / t:,.0f} records/s" for s, t in seconds.items()},
        f"floor {size / 1e6 / floor:,.0f} MB/s, {len(texts) / floor:,.0f} records/s",
    )
    table.add("ingest / parse floor", {s: f"{t / floor:,.1f}x" for s, t in seconds.items()}, "target <= 12x")
    table.add("ingest peak RSS (process tree)", {s: f"{peaks[s] / 2**20:,.0f} MiB" for s in sides}, "target < 1024 MiB")
    reingest = {side: side.run("ingest", str(corpus), "--db", str(dbs[side]), "--json")[0] for side in sides}
    table.add(
        "re-ingest, unchanged corpus",
        {s: f"{t:,.2f} s = {100 * t / seconds[s]:.1f}% of ingest" for s, t in reingest.items()},
        "target < 2%",
    )


def sdk_row(table: Table, sides: list[Side], work: Path, copies: int, runs: int) -> None:
    sdk = work / f"sdk-{copies}"
    if not (sdk / "truth.json").exists():
        shutil.rmtree(sdk, ignore_errors=True)
        sdk_shaped.generate(sdk, copies)
    sdk_texts = payloads(sdk)
    sdk_floor = parse_floor(sdk_texts)
    sdk_truth = json.loads((sdk / "truth.json").read_text())
    table.add(
        "SDK-shaped corpus",
        f"{copies:,} copies of the samples' text transcripts: {sdk_truth['files']:,} files, "
        f"{sdk_truth['bytes'] / 1e6:,.0f} MB, {len(sdk_texts):,} records",
    )
    sdk_db = work / "bench-sdk.duckdb"
    sdk_seconds = {side: ingest_time(side, [sdk], sdk_db, runs) for side in sides}
    fresh(sdk_db).unlink(missing_ok=True)
    table.add(
        "SDK-shaped ingest / parse floor",
        {s: f"{t / sdk_floor:,.1f}x ({t:,.1f} s)" for s, t in sdk_seconds.items()},
        f"target <= 8x (parse floor {sdk_floor:,.3f} s)",
    )


def small_files_row(table: Table, sides: list[Side], corpus: Path, work: Path, files: int, runs: int) -> None:
    from . import small_files

    many, one = small_files.split(corpus, work / f"small-{corpus.name}-{files}", files)
    small_db = work / "bench-small.duckdb"
    small = {side: small_files.measure(side, many, one, small_db, runs) for side in sides}
    fresh(small_db).unlink(missing_ok=True)
    table.add(
        f"{files:,} one-record files / the same records in one file",
        {s: f"{a / b:,.1f}x ({a:,.1f} s / {b:,.2f} s)" for s, (a, b) in small.items()},
        "target <= 2x",
    )


def jsonl_row(table: Table, corpus: Path, work: Path) -> None:
    jsonl_files = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    baseline_s, baseline_found = read_json_baseline(corpus)
    jsonl_db = fresh(work / f"bench-{corpus.name}-jsonl.duckdb")
    jsonl_s = timed([*HERE.command("ingest", *jsonl_files, "--db", str(jsonl_db), "--json")])[0]
    count = "SELECT count(*) AS n FROM citations WHERE NOT inferred"
    typed = json.loads(HERE.run("sql", count, "--db", str(jsonl_db), "--format", "json")[2])[0]["n"]
    fresh(jsonl_db).unlink(missing_ok=True)
    table.add(
        "citations from the JSON Lines part",
        f"archiver ingest {jsonl_s:,.1f} s, {typed:,} typed citations",
        f"DuckDB read_json by hand {baseline_s:,.2f} s, {baseline_found:,} citations (no claims, copies, raw)",
    )


def _merge(results: Path, title: str, text: str) -> str:
    """RESULTS.md keeps one section per run title (corpus size, baseline, day and label); a run of a title
    already there re-measures its rows in that section (`_rows_merged`); sections that are not runs (the
    analysis of what bounds the numbers) are kept as they are."""
    header = "# Benchmark results\n\nEach `## tasks N` section is one run of `benchmarks/run`.\n"
    runs: dict[str, str] = {}
    notes: list[str] = []
    if results.exists():
        for block in results.read_text().split("\n## ")[1:]:
            heading, _, body = block.partition("\n")
            if heading.startswith("tasks "):
                runs[heading] = body.strip("\n")
            else:
                notes.append(f"\n## {heading}\n{body.rstrip()}\n")
    runs[title] = _rows_merged(runs[title], text.strip("\n")) if title in runs else text.strip("\n")

    def order(heading: str) -> tuple[int, str]:
        return int(heading.split()[1].rstrip(",").replace(",", "")), heading

    return header + "".join(f"\n## {t}\n\n{runs[t]}\n" for t in sorted(runs, key=order)) + "".join(notes)


def _rows_merged(old: str, new: str) -> str:
    """A section re-measured in part (`--rows`, `--scales`): the new rows replace the old rows of the same
    measure where they stand, rows new to the section follow, the command lines of both runs are kept above
    the table and any note below it stays there.
    A table of other sides replaces the old one whole."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    old_table, new_table = ([line for line in lines if line.startswith("|")] for lines in (old_lines, new_lines))
    if old_table[:2] != new_table[:2]:
        return new

    def measure(line: str) -> str:
        return line.split(" | ")[0]

    remeasured = {measure(line): line for line in new_table[2:]}
    rows = [remeasured.pop(measure(line), line) for line in old_table[2:]] + list(remeasured.values())
    first = old_lines.index(old_table[0])
    commands = [line for line in old_lines[:first] if line]
    commands += [line for line in new_lines if line and not line.startswith("|") and line not in commands]
    after = old_lines[first + len(old_table) :]  # what was written below the table stays below it
    return "\n\n".join(commands) + "\n\n" + "\n".join([*new_table[:2], *rows, *after])


if __name__ == "__main__":
    main()
