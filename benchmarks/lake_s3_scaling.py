"""Ingest into a lake on S3-compatible storage from 1, 2 and 4 writer hosts, in one run:
`python -m benchmarks.lake_s3_scaling [--folders 16] [--files 4] [--records 100] [--grouped]` (as root).

Each writer is a host of its own (a network namespace, `tests/hosts.py`); moto's S3-compatible server and
a PostgreSQL catalog run on another. The corpus (generated transcripts, each file its own tasks) is split
between the writers, folder by folder, as a fleet's hosts each ingest their own dumps; every round ingests
it into a new lake. Reported per round: wall time, records/s, the catalog's commits (DuckLake snapshots)
and commits/s, the Parquet objects written, and the object store's requests by method, per source file.
By default every file is its own commit (as a fleet ingesting dumps as they arrive does); `--grouped`
keeps the archiver's own grouping (up to 20,000 records a commit). Needs the test extra (moto, boto3).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests import hosts, servers
from tests.transcripts import jsonrpc_result, v1_cited_parts, v1_task

ROOT = Path(__file__).resolve().parent.parent
BUCKET = "bench"
KEYS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_REGION": "us-east-1"}
ONE_PER_COMMIT = "import archiver.ingest.run as r, archiver.ingest.pipeline as p; r.GROUP_RECORDS = p.CHUNK_FILES = 1; "


def corpus(root: Path, folders: int, files: int, records: int) -> list[Path]:
    made = []
    for f in range(folders):
        folder = root / f"dump{f}"
        folder.mkdir(parents=True)
        for n in range(files):
            lines = [
                json.dumps(
                    jsonrpc_result({"task": v1_task(f"t-{f}-{n}-{k}", v1_cited_parts({"share": k / 100}))}, rpc_id=k)
                )
                for k in range(records)
            ]
            (folder / f"log{n}.jsonl").write_text("\n".join(lines) + "\n")
        made.append(folder)
    return made


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and of its children that ended (a PostgreSQL server's backends)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def writers_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def psql(catalog: servers.Server, database: str, statement: str) -> str:
    command = [str(catalog.bindir / "psql"), "-h", str(catalog.root), "-p", "5432", "-U", "postgres", "-d", database]
    return subprocess.run([*command, "-At", "-c", statement], check=True, capture_output=True, text=True).stdout.strip()


def round_of(writers: list[hosts.Host], dumps: list[Path], store, catalog, grouped: bool, n: int) -> dict:
    """Ingest `dumps` into a new lake from `writers` at once; what it took."""
    database = f"bench{n}"
    psql(catalog, "postgres", f"CREATE DATABASE {database}")
    db = f"ducklake:postgres:dbname={database} host=db.internal port=5432 user=postgres"
    data = f"s3://{BUCKET}/round{n}/"
    env = {**os.environ, **KEYS, "AWS_ENDPOINT_URL": "http://s3.internal:9000"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    python = [
        sys.executable,
        "-c",
        ("" if grouped else ONE_PER_COMMIT) + "from archiver.cli import main; main(prog_name='archiver')",
    ]
    subprocess.run(
        writers[0].command([*python, "db", "upgrade", "--db", db, "--data-path", data]),
        env=env,
        check=True,
        capture_output=True,
    )
    shares = [dumps[k :: len(writers)] for k in range(len(writers))]
    before = len(store.requests())
    snapshots = int(psql(catalog, database, "SELECT count(*) FROM ducklake_snapshot"))
    postmaster = int((catalog.root / "data" / "postmaster.pid").read_text().split()[0])
    cpu = (writers_cpu(), cpu_seconds(store.pid), cpu_seconds(postmaster))
    started = time.monotonic()
    running = [
        subprocess.Popen(
            host.command([*python, "ingest", *map(str, share), "--db", db, "--json"]),
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for host, share in zip(writers, shares, strict=True)
    ]  # fmt: skip
    summaries = []
    for process in running:
        out, err = process.communicate(timeout=3600)
        if process.returncode:
            raise SystemExit(f"a writer failed: {err[-2000:]}")
        summaries.append(json.loads(out))
    elapsed = time.monotonic() - started
    used = [
        after - first
        for after, first in zip((writers_cpu(), cpu_seconds(store.pid), cpu_seconds(postmaster)), cpu, strict=True)
    ]
    requests = Counter(method for method, _path in store.requests()[before:])
    commits = int(psql(catalog, database, "SELECT count(*) FROM ducklake_snapshot")) - snapshots
    files = sum(s["files"] for s in summaries)
    parquet = int(psql(catalog, database, "SELECT count(*) FROM ducklake_data_file"))
    return {
        "writers": len(writers),
        "seconds": elapsed,
        "files": files,
        "records": sum(s["records"] for s in summaries),
        "commits": commits,
        "retries": sum(s["commit_retries"] for s in summaries),
        "parquet": parquet,
        "requests": dict(requests),
        "cpu": used,
    }


def compacted(net: hosts.Network, store, database: str, data: str) -> str:
    """DuckLake's merge of adjacent files on a round's lake, from this process: objects before and after."""
    import duckdb

    from archiver.offline import install_extensions
    from archiver.store.backend import extensions, locate
    from archiver.store.objectstore import reach

    os.environ.update({**KEYS, "AWS_ENDPOINT_URL": store.endpoint})
    lake = f"ducklake:postgres:dbname={database} host={net.server_address} port=5432 user=postgres"
    with duckdb.connect() as con:
        install_extensions(con, extensions(locate(lake)))
        reach(con, data)
        con.execute(f"ATTACH '{lake}' AS lake")
        before = con.execute(f"SELECT count(*) FROM glob('{data}**/*.parquet')").fetchone()[0]
        started = time.monotonic()
        con.execute("CALL ducklake_merge_adjacent_files('lake')")
        con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
        con.execute("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
        elapsed = time.monotonic() - started
        after = con.execute(f"SELECT count(*) FROM glob('{data}**/*.parquet')").fetchone()[0]
    merged = "merge_adjacent_files + expire_snapshots + cleanup_old_files"
    return f"{merged}: {before} Parquet objects -> {after} in {elapsed:.1f} s"


def table(rounds: list[dict]) -> str:
    base = rounds[0]["records"] / rounds[0]["seconds"]
    lines = [
        "| writer hosts | seconds | records/s | vs 1 | commits | commits/s | retries | Parquet objects | "
        "requests per file (PUT / GET / HEAD / other) | CPU s: writers / store / catalog |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        rate = r["records"] / r["seconds"]
        per = {method: r["requests"].get(method, 0) / r["files"] for method in ("PUT", "GET", "HEAD")}
        other = sum(v for k, v in r["requests"].items() if k not in per) / r["files"]
        lines.append(
            f"| {r['writers']} | {r['seconds']:.1f} | {rate:,.0f} | {rate / base:.2f}x | {r['commits']} | "
            f"{r['commits'] / r['seconds']:.1f} | {r['retries']} | {r['parquet']} | "
            f"{per['PUT']:.1f} / {per['GET']:.1f} / {per['HEAD']:.1f} / {other:.1f} | "
            f"{' / '.join(f'{seconds:.1f}' for seconds in r['cpu'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=16)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--grouped", action="store_true")
    args = parser.parse_args()
    why = hosts.unavailable()
    if why:
        raise SystemExit(f"writer hosts cannot be made here: {why}")
    counts = [int(n) for n in args.writers.split(",")]
    os.environ.setdefault("ARCHIVER_EXTENSION_DIR", tempfile.mkdtemp(prefix="archiver-bench-extensions-"))
    with tempfile.TemporaryDirectory(prefix="archiver-bench-") as folder:
        dumps = corpus(Path(folder), args.folders, args.files, args.records)
        with hosts.network(max(counts), names=("db.internal", "s3.internal")) as net:
            on_server = tuple(net.on_server([]))
            subnet = f"{net.server_address.rsplit('.', 1)[0]}.0/24"
            with (
                servers.object_store(net.server_address, 9000, on_server, names=("s3.internal",)) as store,
                servers.postgres(
                    hba=(f"host all all {subnet} trust",), listen=net.server_address, port=5432, on_host=on_server
                ) as catalog,
            ):  # fmt: skip
                import boto3

                keys = {
                    "aws_access_key_id": KEYS["AWS_ACCESS_KEY_ID"],
                    "aws_secret_access_key": KEYS["AWS_SECRET_ACCESS_KEY"],
                }
                boto3.client("s3", endpoint_url=store.endpoint, region_name="us-east-1", **keys).create_bucket(
                    Bucket=BUCKET
                )
                rounds = [
                    round_of(net.writers[:count], dumps, store, catalog, args.grouped, n)
                    for n, count in enumerate(counts)
                ]
                merged = compacted(net, store, f"bench{len(counts) - 1}", f"s3://{BUCKET}/round{len(counts) - 1}/")
    print(
        f"{args.folders * args.files} files of {args.records} records ({args.folders} dumps), "
        f"{'grouped commits' if args.grouped else 'one commit per file'}; {platform.node()}, {os.cpu_count()} cores"
    )
    print(table(rounds))
    print(f"the last round's lake, compacted: {merged}")


if __name__ == "__main__":
    main()
