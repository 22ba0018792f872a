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

from . import sdk_shaped
from .common import HERE, ROOT, Side, baseline, corpus_for, fresh, ingest_time, timed
from .generate import MEDIA_TYPE, RARE_COLUMN

ARCHIVER = [sys.executable, "-m", "archiver"]


def payloads(corpus: Path) -> list[bytes]:
    """Every JSON text of every record, split out before the clock starts. (Imported here: a baseline's
    interpreter imports this module to scale its archive, and an older revision has no core.)"""
    from archiver import _core
    from archiver.read.containers import GZIP_LIMIT, RECORD_LIMIT, SourceFile, is_sqlite, sqlite_rows

    found = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.name in ("truth.json", ".archiverignore"):
            continue
        source = SourceFile(str(path))
        if is_sqlite(source):
            for _, row in sqlite_rows(source):
                cells = orjson.loads(row)
                found += [cells[k].encode() for k in ("status", "artifacts", "history") if cells.get(k)]
            continue
        _, _, records = _core.read_records_of(os.fsencode(path), None, str(path), RECORD_LIMIT, GZIP_LIMIT)
        # each record: (seq, locator, raw, kind, line, byte offset, payload, error, envelope)
        found += [record[6] for record in records if record[3] == "json"]
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


def scale_archive(source_db: Path, target_db: Path, claims_wanted: int) -> int:
    """An archive with about `claims_wanted` claims: when the source holds more, a new archive of whole
    results taken from it (with their records and sources, as an ingest of fewer files would store them;
    deleting from a copy would leave the dropped rows in its row groups for every scan to pass over);
    when it holds fewer, a copy with its results replicated under fresh ids."""
    import duckdb

    from archiver.store.migrations import upgrade

    target_db.unlink(missing_ok=True)
    with duckdb.connect(str(source_db), read_only=True) as source:
        have = source.execute("SELECT count(*) FROM claims").fetchone()[0]
        keep = round(source.execute("SELECT count(*) FROM results").fetchone()[0] * claims_wanted / have)
    derived = ("parts", "citations", "claims")
    if have > claims_wanted:
        con = duckdb.connect(str(target_db))
        con.execute("SET enable_progress_bar = false")
        upgrade(con)
        con.execute(f"ATTACH '{source_db}' AS src (READ_ONLY)")
        con.execute(f"CREATE TEMP TABLE kept AS SELECT copy_id FROM src.results ORDER BY copy_id LIMIT {keep}")
        for table in ("results", *derived):
            con.execute(f"INSERT INTO {table} SELECT * FROM src.{table} WHERE copy_id IN (SELECT copy_id FROM kept)")
        con.execute("""INSERT INTO records SELECT * FROM src.records
                       WHERE record_id IN (SELECT unnest(record_ids) FROM results) OR status = 'quarantined'""")
        con.execute("INSERT INTO sources SELECT * FROM src.sources WHERE path IN (SELECT source_path FROM records)")
        for table in ("agent_cards", "rpc_errors"):
            con.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
        con.execute("DETACH src")
    else:
        shutil.copy(source_db, target_db)
        con = duckdb.connect(str(target_db))
        con.execute("SET enable_progress_bar = false")
        copies = -(-claims_wanted // have)
        keyed = {
            "results": ("copy_id", "result_key", "task_id", "context_id"),
            **dict.fromkeys(derived, ("part_id", "copy_id", "result_key")),
        }
        for table, keys in keyed.items():
            columns = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            ]
            select = ", ".join(f"{c} || '~' || k AS {c}" if c in keys else c for c in columns)
            con.execute(f"CREATE TEMP TABLE base_{table} AS SELECT * FROM {table}")
            con.execute(f"INSERT INTO {table} SELECT {select} FROM base_{table}, range(1, {copies}) t(k)")
    con.execute("CHECKPOINT")
    total = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    con.close()
    return total


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
        f"from benchmarks.run import scale_archive; "
        f"print(scale_archive(Path({str(source_db)!r}), Path({str(target_db)!r}), {claims}))"
    )
    done = subprocess.run([side.python, "-c", code], cwd=side.cwd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"scaling with {side.name} failed: {done.stderr[-2000:]}")
    return int(done.stdout.split()[-1])


def interleaved(commands: dict[Side, list[str]], runs: int) -> dict[Side, tuple[float, int, str]]:
    """Each side's median wall time, peak memory and answer for one question, the sides taking turns."""
    first = {side: side.run(*args, sample_memory=True) for side, args in commands.items()}
    times = {side: [seconds] for side, (seconds, _, _) in first.items()}
    for _ in range(runs - 1):
        for side, args in commands.items():
            times[side].append(side.run(*args)[0])
    return {side: (statistics.median(times[side]), first[side][1], first[side][2]) for side in commands}


def described(seconds: float, peak: int, out: str) -> str:
    return (
        f"{seconds:.2f} s ({len(out.splitlines()):,} lines, {len(out.encode()) / 1e6:,.1f} MB out, "
        f"{peak / 2**20:,.0f} MiB peak)"
    )


def copy_reference(db: Path, column: str, out: Path, runs: int) -> float:
    """Seconds for DuckDB alone, in a process of its own, to write the rows of `query claims --column`
    as JSON Lines: the query's own SQL in one `COPY ... TO` statement."""
    from archiver.query.lineage import claims
    from archiver.query.selection import Selection

    query = claims(Selection.of(column=[column]))
    code = (
        "import duckdb, json, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
        "con.execute('SET enable_progress_bar = false'); "
        "con.execute('COPY (' + sys.argv[2] + ') TO ' + repr(sys.argv[3]) + ' (FORMAT json)', json.loads(sys.argv[4]))"
    )
    command = [sys.executable, "-c", code, str(db), query.sql, str(out), json.dumps(query.params)]
    seconds = statistics.median(timed(command)[0] for _ in range(runs))
    out.unlink(missing_ok=True)
    return seconds


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


def speed_up(times: dict[Side, float]) -> str:
    """How many times faster this tree is than each baseline."""
    return ", ".join(f"{times[side] / times[HERE]:.1f}x faster than {side.name}" for side in times if side is not HERE)


def main() -> None:
    parser = argparse.ArgumentParser(description="archiver benchmarks")
    parser.add_argument("--tasks", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "corpus")
    parser.add_argument("--scales", default="1000000,10000000", help="claims in the scaled query archives")
    parser.add_argument("--baseline", metavar="REV", help="a revision measured beside the working tree in this run")
    parser.add_argument("--sdk-copies", type=int, default=300, help="copies of the samples in the SDK-shaped corpus")
    parser.add_argument("--small-files", type=int, default=10000, help="one-record files in the small-files row")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is quoted)")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    sides = [HERE] + ([baseline(args.baseline, args.work)] if args.baseline else [])
    table = Table(sides)

    corpus, truth = corpus_for(args.tasks, args.seed, args.work)
    size = truth["bytes"]
    texts = payloads(corpus)
    floor = parse_floor(texts)
    table.add(
        "corpus",
        f"{size / 1e6:,.0f} MB, {len(texts):,} records, {truth['tasks']:,} results, {truth['claims']:,} claims",
    )
    dbs = {side: args.work / f"bench-{args.tasks}-{side.name}.duckdb" for side in sides}
    ingested = {
        side: side.run("ingest", str(corpus), "--db", str(fresh(dbs[side])), "--json", sample_memory=True)
        for side in sides
    }
    for side, (_, _, out) in ingested.items():
        summary = json.loads(out)
        assert (summary["citations"], summary["claims"]) == (truth["citations"], truth["claims"]), (side, summary)
    seconds = {side: ingested[side][0] for side in sides}
    table.add(
        "ingest wall time",
        {s: f"{t:,.1f} s" for s, t in seconds.items()},
        f"parse floor {floor:,.2f} s (orjson, one process)",
    )
    table.add(
        "ingest throughput",
        {s: f"{size / 1e6 / t:,.1f} MB/s, {len(texts) / t:,.0f} records/s" for s, t in seconds.items()},
        f"floor {size / 1e6 / floor:,.0f} MB/s, {len(texts) / floor:,.0f} records/s",
    )
    table.add("ingest / parse floor", {s: f"{t / floor:,.1f}x" for s, t in seconds.items()}, "target <= 12x")
    table.add(
        "ingest peak RSS (process tree)", {s: f"{ingested[s][1] / 2**20:,.0f} MiB" for s in sides}, "target < 1024 MiB"
    )
    reingest = {side: side.run("ingest", str(corpus), "--db", str(dbs[side]), "--json")[0] for side in sides}
    table.add(
        "re-ingest, unchanged corpus",
        {s: f"{t:,.2f} s = {100 * t / seconds[s]:.1f}% of ingest" for s, t in reingest.items()},
        "target < 5%",
    )

    sdk = args.work / f"sdk-{args.sdk_copies}"
    if not (sdk / "truth.json").exists():
        shutil.rmtree(sdk, ignore_errors=True)
        sdk_shaped.generate(sdk, args.sdk_copies)
    sdk_texts = payloads(sdk)
    sdk_floor = parse_floor(sdk_texts)
    sdk_truth = json.loads((sdk / "truth.json").read_text())
    table.add(
        "SDK-shaped corpus",
        f"{args.sdk_copies:,} copies of the samples' text transcripts: {sdk_truth['files']:,} files, "
        f"{sdk_truth['bytes'] / 1e6:,.0f} MB, {len(sdk_texts):,} records",
    )
    sdk_db = args.work / "bench-sdk.duckdb"
    sdk_seconds = {side: ingest_time(side, [sdk], sdk_db, args.runs) for side in sides}
    fresh(sdk_db).unlink(missing_ok=True)
    table.add(
        "SDK-shaped ingest / parse floor",
        {s: f"{t / sdk_floor:,.1f}x ({t:,.1f} s)" for s, t in sdk_seconds.items()},
        f"target <= 8x (parse floor {sdk_floor:,.3f} s)",
    )

    from . import small_files

    many, one = small_files.split(corpus, args.work / f"small-{args.tasks}-{args.small_files}", args.small_files)
    small_db = args.work / "bench-small.duckdb"
    small = {side: small_files.measure(side, many, one, small_db, args.runs) for side in sides}
    fresh(small_db).unlink(missing_ok=True)
    table.add(
        f"{args.small_files:,} one-record files / the same records in one file",
        {s: f"{a / b:,.1f}x ({a:,.1f} s / {b:,.2f} s)" for s, (a, b) in small.items()},
        "target <= 2x",
    )

    jsonl_files = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    baseline_s, baseline_found = read_json_baseline(corpus)
    jsonl_db = fresh(args.work / f"bench-{args.tasks}-jsonl.duckdb")
    jsonl_s = timed([*HERE.command("ingest", *jsonl_files, "--db", str(jsonl_db), "--json")])[0]
    count = "SELECT count(*) AS n FROM citations WHERE NOT inferred"
    typed = json.loads(HERE.run("sql", count, "--db", str(jsonl_db), "--format", "json")[2])[0]["n"]
    fresh(jsonl_db).unlink(missing_ok=True)
    table.add(
        "citations from the JSON Lines part",
        f"archiver ingest {jsonl_s:,.1f} s, {typed:,} typed citations",
        f"DuckDB read_json by hand {baseline_s:,.2f} s, {baseline_found:,} citations (no claims, copies, raw)",
    )

    help_s = {side: statistics.median(side.run("--help")[0] for _ in range(5)) for side in sides}
    busiest = "SELECT source_column, study FROM citations GROUP BY ALL ORDER BY count(*) DESC LIMIT 1"
    index = json.loads(HERE.run("sql", busiest, "--db", str(dbs[HERE]), "--format", "json")[2])[0]
    for wanted in [int(x) for x in args.scales.split(",") if x]:
        scaled_dbs = {side: args.work / f"bench-{args.tasks}-{side.name}-{wanted}.duckdb" for side in sides}
        claims = {side: scaled(side, dbs[side], scaled_dbs[side], wanted) for side in sides}
        label = f"{claims[HERE] / 1e6:,.1f}M claims"
        for side in sides:  # a warm file cache for every timed run
            side.run("sql", "SELECT count(*) FROM claims", "--db", str(scaled_dbs[side]))

        def asked(*question: str, dbs: dict[Side, Path] = scaled_dbs) -> dict[Side, tuple[float, int, str]]:
            return interleaved({side: [*question, "--db", str(dbs[side])] for side in sides}, args.runs)

        column = asked("query", "claims", "--column", index["source_column"], "--format", "jsonl")
        copy_s = copy_reference(scaled_dbs[HERE], index["source_column"], args.work / "copy.jsonl", args.runs)
        table.add(f"query claims --column, busiest ({label})", {s: described(*v) for s, v in column.items()})
        table.add(
            f"query claims --column, busiest / DuckDB writing the same rows ({label})",
            f"{column[HERE][0] / copy_s:,.1f}x",
            f"DuckDB `COPY (the query) TO` JSON Lines {copy_s:.2f} s, process start included; target <= 2x",
        )
        rare = asked("query", "claims", "--column", RARE_COLUMN, "--format", "jsonl")
        table.add(f"query claims --column, 0.1% of claims ({label})", {s: described(*v) for s, v in rare.items()})
        table.add(
            f"query claims --column, 0.1% of claims / archiver --help ({label})",
            {s: f"{rare[s][0] / help_s[s]:,.1f}x" for s in sides},
            "target <= 5x",
        )
        for name, question in (
            ("query impact --study", ("query", "impact", "--study", index["study"], "--format", "json")),
            ("audit", ("audit", "--format", "json", "--fail-on", "never")),
            ("count(*) FROM claim_citations", ("sql", "SELECT count(*) FROM claim_citations", "--format", "json")),
        ):
            answered = asked(*question)
            table.add(
                f"{name} ({label})",
                {s: described(*v) for s, v in answered.items()},
                speed_up({s: v[0] for s, v in answered.items()}) or "target < 1 s",
            )
        for path in scaled_dbs.values():
            fresh(path).unlink(missing_ok=True)
    bare_s = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    table.add(
        "archiver --help cold start",
        {s: f"{t:.2f} s" for s, t in help_s.items()},
        f"bare python {bare_s:.2f} s; target < 0.3 s",
    )

    machine = (
        f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    command = " ".join(["benchmarks/run", *sys.argv[1:]])
    text = "\n".join([f"`{command}` on {machine}", "", *table.markdown(), ""])
    print(text)
    title = f"tasks {args.tasks:,}" + (
        f", beside {args.baseline}, {time.strftime('%Y-%m-%d')}" if args.baseline else ""
    )
    args.results.write_text(_merge(args.results, title, text))


def _merge(results: Path, title: str, text: str) -> str:
    """RESULTS.md keeps one section per run title (corpus size, and baseline and day when measured beside
    one), and this run replaces a section of its own title; sections that are not runs (the analysis of
    what bounds the numbers) are kept as they are."""
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
    runs[title] = text.strip("\n")

    def order(heading: str) -> tuple[int, str]:
        return int(heading.split()[1].rstrip(",").replace(",", "")), heading

    return header + "".join(f"\n## {t}\n\n{runs[t]}\n" for t in sorted(runs, key=order)) + "".join(notes)


if __name__ == "__main__":
    main()
