"""The benchmark behind `benchmarks/run`: every figure beside a baseline measured in the same run.

Figures: ingest throughput against the orjson parse floor of the same records; peak resident
memory of the whole ingest process tree (summed RSS from /proc, sampled every 250 ms); re-ingest of
the unchanged corpus; `query claims --column`, `query impact --study` and `audit` wall time,
process start included, on archives scaled to 1M and 10M claims; `archiver --help` cold start; and
the same citation extraction written by hand with DuckDB's `read_json` over the JSON Lines files.
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
import threading
import time
from pathlib import Path

import orjson

from archiver.read.containers import SourceFile, read_records

from .generate import MEDIA_TYPE, generate

ROOT = Path(__file__).resolve().parent.parent
ARCHIVER = [sys.executable, "-m", "archiver"]


def corpus_for(tasks: int, seed: int, work: Path) -> tuple[Path, dict]:
    folder = work / f"corpus-{tasks}-{seed}"
    truth_file = folder / "truth.json"
    if not truth_file.exists():
        shutil.rmtree(folder, ignore_errors=True)
        generate(folder, tasks, seed)
    return folder, json.loads(truth_file.read_text())


def payloads(corpus: Path) -> list[bytes]:
    """Every JSON text of every record, split out before the clock starts."""
    found = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.name in ("truth.json", ".archiverignore"):
            continue
        _, _, records = read_records(SourceFile(str(path)))
        for record in records:
            if record.kind == "json":
                found.append(record.payload)
            elif record.kind == "row":
                found += [v.encode() for k, v in record.value.items() if k in ("status", "artifacts", "history") and v]
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


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (forkserver workers included)."""
    total, pending, seen = 0, [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        pending += _children(current)
    return total


def _children(pid: int) -> list[int]:
    found = []
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def timed(command: list[str], sample_memory: bool = False) -> tuple[float, int, str]:
    """Wall seconds, peak tree RSS (when sampled) and stdout of one command."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    peak = 0
    if sample_memory:
        done = threading.Event()
        out_chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: (out_chunks.append(process.stdout.read()), done.set()))
        reader.start()
        while process.poll() is None:
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.25)
        reader.join()
        stdout = b"".join(out_chunks)
        stderr = process.stderr.read()
    else:
        stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed: {stderr.decode()[-2000:]}")
    return elapsed, peak, stdout.decode()


def median_of(command: list[str], runs: int = 3) -> float:
    return statistics.median(timed(command)[0] for _ in range(runs))


def measured_query(command: list[str], runs: int = 3) -> str:
    """Median wall time of a query or audit, with its peak memory and the size of its answer."""
    seconds, peak, out = timed(command, sample_memory=True)
    seconds = statistics.median([seconds] + [timed(command)[0] for _ in range(runs - 1)])
    return (
        f"{seconds:.2f} s ({len(out.splitlines()):,} lines, {len(out.encode()) / 1e6:,.1f} MB out, "
        f"{peak / 2**20:,.0f} MiB peak)"
    )


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


def main() -> None:
    parser = argparse.ArgumentParser(description="archiver benchmarks")
    parser.add_argument("--tasks", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "corpus")
    parser.add_argument("--scales", default="1000000,10000000", help="claims in the scaled query archives")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    corpus, truth = corpus_for(args.tasks, args.seed, args.work)
    size = truth["bytes"]
    texts = payloads(corpus)
    floor = parse_floor(texts)
    db = args.work / f"bench-{args.tasks}.duckdb"
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)
    ingest_s, peak, out = timed([*ARCHIVER, "ingest", str(corpus), "--db", str(db), "--json"], sample_memory=True)
    summary = json.loads(out)
    reingest_s, _, _ = timed([*ARCHIVER, "ingest", str(corpus), "--db", str(db), "--json"])
    jsonl_files = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    baseline_s, baseline_found = read_json_baseline(corpus)
    jsonl_db = args.work / f"bench-{args.tasks}-jsonl.duckdb"
    jsonl_db.unlink(missing_ok=True)
    jsonl_s = timed([*ARCHIVER, "ingest", *jsonl_files, "--db", str(jsonl_db), "--json"])[0]
    typed = json.loads(
        timed(
            [
                *ARCHIVER,
                "sql",
                "SELECT count(*) AS n FROM citations WHERE NOT inferred",
                "--db",
                str(jsonl_db),
                "--format",
                "json",
            ]
        )[2]
    )[0]["n"]
    jsonl_db.unlink(missing_ok=True)

    rows = [
        (
            "corpus",
            (f"{size / 1e6:,.0f} MB, {len(texts):,} records, {truth['tasks']:,} results, {truth['claims']:,} claims"),
            "",
        ),
        ("ingest wall time", f"{ingest_s:,.1f} s", f"parse floor {floor:,.2f} s (orjson, one process)"),
        (
            "ingest throughput",
            f"{size / 1e6 / ingest_s:,.1f} MB/s, {len(texts) / ingest_s:,.0f} records/s",
            f"floor {size / 1e6 / floor:,.0f} MB/s, {len(texts) / floor:,.0f} records/s",
        ),
        ("ingest / parse floor", f"{ingest_s / floor:,.1f}x", "target <= 4x"),
        ("ingest peak RSS (process tree)", f"{peak / 2**20:,.0f} MiB", "target < 1024 MiB"),
        (
            "re-ingest, unchanged corpus",
            f"{reingest_s:,.2f} s = {100 * reingest_s / ingest_s:.1f}% of ingest",
            "target < 5%",
        ),
        (
            "citations from the JSON Lines part",
            f"archiver ingest {jsonl_s:,.1f} s, {typed:,} typed citations",
            f"DuckDB read_json by hand {baseline_s:,.2f} s, {baseline_found:,} citations (no claims, copies, raw)",
        ),
    ]
    assert summary["citations"] == truth["citations"], summary
    assert summary["claims"] == truth["claims"], summary

    busiest = "SELECT source_column, study FROM citations GROUP BY ALL ORDER BY count(*) DESC LIMIT 1"
    index = json.loads(timed([*ARCHIVER, "sql", busiest, "--db", str(db), "--format", "json"])[2])[0]
    for wanted in [int(x) for x in args.scales.split(",") if x]:
        scaled = args.work / f"bench-{args.tasks}-{wanted}.duckdb"
        claims = scale_archive(db, scaled, wanted)
        base = ["--db", str(scaled)]
        label = f"{claims / 1e6:,.1f}M claims"
        timed([*ARCHIVER, "sql", "SELECT count(*) FROM claims", *base])  # a warm file cache for every timed run
        rows += [
            (
                f"query claims --column ({label})",
                measured_query(
                    [*ARCHIVER, "query", "claims", "--column", index["source_column"], "--format", "jsonl", *base]
                ),
                "target < 1 s, process start included",
            ),
            (
                f"query impact --study ({label})",
                measured_query([*ARCHIVER, "query", "impact", "--study", index["study"], "--format", "json", *base]),
                "target < 1 s",
            ),
            (
                f"audit ({label})",
                measured_query([*ARCHIVER, "audit", "--format", "json", "--fail-on", "never", *base]),
                "target < 1 s",
            ),
        ]
        scaled.unlink(missing_ok=True)
    help_s = statistics.median(timed([*ARCHIVER, "--help"])[0] for _ in range(5))
    bare_s = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    rows.append(("archiver --help cold start", f"{help_s:.2f} s", f"bare python {bare_s:.2f} s; target < 0.3 s"))

    table = ["| measure | archiver | baseline / target |", "|---|---|---|"]
    table += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    machine = (
        f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    text = "\n".join([f"`benchmarks/run --tasks {args.tasks}` on {machine}", "", *table, ""])
    print(text)
    args.results.write_text(_merge(args.results, args.tasks, text))


def _merge(results: Path, tasks: int, text: str) -> str:
    """RESULTS.md keeps one section per corpus size, and this run replaces its own; sections that
    are not runs (the analysis of what bounds the numbers) are kept as they are."""
    header = "# Benchmark results\n\nEach `## tasks N` section is one run of `benchmarks/run`.\n"
    runs: dict[int, str] = {}
    notes: list[str] = []
    if results.exists():
        for block in results.read_text().split("\n## ")[1:]:
            title, _, body = block.partition("\n")
            if title.startswith("tasks "):
                runs[int(title.split()[1].replace(",", ""))] = body.strip("\n")
            else:
                notes.append(f"\n## {title}\n{body.rstrip()}\n")
    runs[tasks] = text.strip("\n")
    return header + "".join(f"\n## tasks {n:,}\n\n{body}\n" for n, body in sorted(runs.items())) + "".join(notes)


if __name__ == "__main__":
    main()
