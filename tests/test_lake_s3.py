"""Lakes on S3-compatible object storage, with writers on several hosts (issue 31).

The hosts are Linux network namespaces made here (`tests/hosts.py`): the servers' host runs moto's
S3-compatible server and a PostgreSQL catalog; each writer runs on a host of its own, with its own address
and host name. docs/lakes.md's deployment block runs as written on one of them. Nothing leaves the machine.
The small edges (lake URLs and data paths refused as usage errors, the spill folder) need no server.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from archiver.archive import Archive
from archiver.cli import main
from archiver.offline import install_extensions
from archiver.store.backend import extensions, locate, spill_folder
from archiver.store.objectstore import reach
from benchmarks.same_contents import differences
from tests import hosts, servers
from tests.transcripts import SAMPLES, jsonrpc_result, v1_cited_parts, v1_task

pytest.importorskip("duckdb_extension_httpfs", reason="the lake extras are not installed: pip install '.[lake]'")

ROOT = Path(__file__).resolve().parent.parent
LAKES = ROOT / "docs" / "lakes.md"
pytestmark = pytest.mark.lake
BUCKET = "archive-lake"


def deployment_block() -> str:
    """The sh block of docs/lakes.md that says this test runs it."""
    text = LAKES.read_text(encoding="utf-8")
    found = re.search(r"<!-- not run: [^>]*tests/test_lake_s3\.py runs it[^>]*-->\n```sh\n(.*?)^```", text, re.M | re.S)
    assert found, "docs/lakes.md has no deployment block marked for tests/test_lake_s3.py"
    return found.group(1)


def deployment_settings() -> dict[str, str]:
    """The block's `export NAME=VALUE` lines."""
    exported = {}
    for line in deployment_block().splitlines():
        if line.startswith("export "):
            name, _, value = shlex.split(line, comments=True)[1].partition("=")
            exported[name] = value
    return exported


@pytest.fixture(autouse=True)
def _extensions(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ARCHIVER_EXTENSION_DIR", str(tmp_path_factory.getbasetemp() / "duckdb-extensions"))
    for name in ("ARCHIVER_DB", "ARCHIVER_DATA_PATH", "ARCHIVER_S3_SECRET", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


# --- the small edges: no server needed ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("db", "data_path", "said"),
    [
        ("ducklake:", None, "ducklake:: name the catalog after 'ducklake:'"),
        ("ducklake: ", None, "ducklake: : name the catalog after 'ducklake:'"),
        ("DUCKLAKE:", None, "DUCKLAKE:: name the catalog after 'ducklake:'"),
        ("DuckLake:postgres: ", None, "DuckLake:postgres: : name the catalog after 'ducklake:'"),
        ("ducklake:mysql:x", None, "ducklake:mysql:x: no catalog of kind 'mysql'"),
        ("ducklake:sqlite:{tmp}/c.sqlite", "s3://", "s3://: name the bucket: the data path is s3://BUCKET/PREFIX"),
        ("ducklake:sqlite:{tmp}/c.sqlite", "S3:///prefix", "S3:///prefix: name the bucket"),
        ("ducklake:sqlite:{tmp}/c.sqlite", "s3://?x", "s3://?x: name the bucket"),
        ("ducklake:sqlite:{tmp}/c.sqlite", "gs://bucket/p", "gs://bucket/p: a data path is s3://BUCKET/PREFIX"),
        ("ducklake:sqlite:{tmp}/c.sqlite", "s3://AKID:sekrit@bucket/p", "s3://…@bucket/p: credentials never go in"),
    ],
)
def test_lake_urls_and_data_paths_are_usage_errors_in_one_line(tmp_path, monkeypatch, db, data_path, said):
    monkeypatch.chdir(tmp_path)
    args = ["ingest", str(SAMPLES / "versant-insights"), "--db", db.format(tmp=tmp_path)]
    result = CliRunner().invoke(main, [*args, *(["--data-path", data_path] if data_path else [])])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    assert errors[0].startswith(f"Error: {said}"), result.output
    assert "Traceback" not in result.output
    assert "sekrit" not in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # nothing made


def test_a_scheme_in_any_case_names_a_lake(tmp_path):
    """`DUCKLAKE:x` was a traceback: the scheme is read in any case, so it is the lake `ducklake:x`."""
    out = run("stats", "--db", f"DUCKLAKE:{tmp_path / 'x'}", code=1)
    lake = f"DuckLake (duckdb catalog {tmp_path / 'x'})"
    assert out == f"Error: {lake}: no archive here (ingest something first, or pass --db)\n"


def test_a_lakes_spill_folder_is_under_the_system_temporary_folder(tmp_path, monkeypatch):
    """DuckDB spilled a lake's work to `./ducklake:sqlite:…tmp` in the working directory."""
    cwd, temp = tmp_path / "cwd", tmp_path / "temp"
    cwd.mkdir()
    temp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read $TMPDIR again
    db = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}"
    with Archive.open(db, data_path=str(tmp_path / "data")) as archive:
        con = archive.con
        assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == spill_folder()
        assert spill_folder() == str(temp / f"archiver-spill-{os.getpid()}")
        con.execute("SET memory_limit = '64MB'")
        con.execute("SET threads = 1")
        spilled = con.execute(
            "SELECT count(*) FROM (SELECT range, md5(range::VARCHAR) AS m FROM range(3000000) ORDER BY m)"
        ).fetchone()[0]
        assert spilled == 3_000_000
        assert os.path.isdir(spill_folder())  # it did spill, there
    assert sorted(path.name for path in cwd.iterdir()) == []


# --- hosts of their own: the servers' host and three writer hosts ---------------------------------------


@dataclass
class Site:
    net: hosts.Network
    store: servers.ObjectStore
    catalog: servers.Server
    settings: dict[str, str]
    """The deployment block's exports (credentials included)."""
    made: int = 0

    def database(self) -> tuple[str, str]:
        """A new catalog database: (--db as the writers name it, --db as this test's process reaches it)."""
        self.made += 1
        name = f"lake{self.made}"
        self.psql(f"CREATE DATABASE {name} OWNER archiver")
        dsn = f"dbname={name} user=archiver"
        return f"ducklake:postgres:{dsn} host=db.internal", f"ducklake:postgres:{dsn} host={self.net.server_address}"

    def psql(self, statement: str, database: str = "postgres") -> str:
        done = subprocess.run(self.psql_command(database, "-c", statement), check=True, capture_output=True, text=True)
        return done.stdout.strip()

    def psql_command(self, database: str, *args: str) -> list[str]:
        command = [str(self.catalog.bindir / "psql"), "-h", str(self.catalog.root), "-p", "5432", "-U", "postgres"]
        return [*command, "-d", database, "-At", "-v", "ON_ERROR_STOP=1", *args]

    def dump(self, database: str) -> str:
        command = [str(self.catalog.bindir / "pg_dump"), "-h", str(self.catalog.root), "-p", "5432", "-U", "postgres"]
        return subprocess.run([*command, database], check=True, capture_output=True, text=True).stdout

    def environment(self, **extra: str) -> dict[str, str]:
        """A writer's environment: the deployment's settings (as the docs export them), this checkout."""
        env = {**os.environ, **self.settings, **extra}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        return env

    def objects(self) -> dict[str, bytes]:
        client = self.client()
        keys = [
            item["Key"]
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
            for item in page.get("Contents", [])
        ]
        return {key: client.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in keys}

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.store.endpoint,
            aws_access_key_id=self.settings["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.settings["AWS_SECRET_ACCESS_KEY"],
            region_name=self.settings["AWS_REGION"],
        )


@pytest.fixture(scope="module")
def site():
    servers.skip_without("postgres")
    pytest.importorskip("moto", reason="moto's server is the tests' S3-compatible store: pip install '.[test]'")
    why = hosts.unavailable()
    if why:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(
            f"writers on hosts of their own need network namespaces: {why}"
        )
    settings = deployment_settings()
    with hosts.network(3, names=("db.internal", "s3.internal")) as net:
        on_server = tuple(net.on_server([]))
        subnet = ipaddress.ip_network(f"{net.server_address}/24", strict=False)
        keepalives = (  # as docs/lakes.md advises: a host gone is noticed in seconds
            "tcp_keepalives_idle=2",
            "tcp_keepalives_interval=1",
            "tcp_keepalives_count=2",
            "tcp_user_timeout=4000",
        )
        with (
            servers.object_store(net.server_address, 9000, on_server, names=("s3.internal",)) as store,
            servers.postgres(
                hba=(f"host all all {subnet} scram-sha-256",), settings=keepalives, listen=net.server_address,
                port=5432, on_host=on_server,
            ) as catalog,
        ):  # fmt: skip
            found = Site(net, store, catalog, settings)
            password = settings["PGPASSWORD"].replace("'", "''")
            found.psql(f"CREATE ROLE archiver LOGIN PASSWORD '{password}'")
            found.client().create_bucket(Bucket=BUCKET)
            yield found


@pytest.fixture
def here(site, monkeypatch):
    """This test's own process reaches the site as a writer does, by the servers' address."""
    for name, value in site.settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", site.store.endpoint)
    monkeypatch.delenv("ARCHIVER_DB")
    return site


def on_host(site: Site, host: hosts.Host, args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    """`archiver ARGS` on a writer's host."""
    return subprocess.Popen(
        host.command([sys.executable, "-m", "archiver", *args]),
        cwd=cwd,
        env=site.environment(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen, timeout: float = 120) -> str:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    return out


def same_as_one_file(lake: str, data_path: str, inputs: list[Path], tmp_path: Path) -> list[str]:
    """What differs between the lake and a single-file archive of the same inputs (nothing, when exact)."""
    single = tmp_path / "single.duckdb"
    run("ingest", *map(str, inputs), "--db", str(single))
    with duckdb.connect() as con:
        install_extensions(con, extensions(locate(lake)))
        reach(con, data_path)
        return differences(lake, single, con)


def corpus(root: Path, folders: int, files: int) -> list[Path]:
    """Folders of distinct small transcripts (each file its own tasks)."""
    made = []
    for f in range(folders):
        folder = root / f"batch{f}"
        folder.mkdir(parents=True)
        for n in range(files):
            lines = [
                json.dumps(
                    jsonrpc_result({"task": v1_task(f"t-{f}-{n}-{k}", v1_cited_parts({"share": 0.1 * k}))}, rpc_id=k)
                )
                for k in range(10)
            ]
            (folder / f"log{n}.jsonl").write_text("\n".join(lines) + "\n")
        made.append(folder)
    return made


def committed_hosts(lake: str) -> list[str]:
    from archiver.store.leases import leases_for

    leases = leases_for(locate(lake))
    try:
        return [
            host for (host,) in leases.runner.query("SELECT host FROM archiver_leases WHERE committed_at IS NOT NULL")
        ]
    finally:
        leases.close()


@pytest.mark.slow
def test_the_deployment_in_the_docs_runs_as_written_and_stores_no_credential(here, tmp_path):
    site = here
    site.psql("CREATE DATABASE archive OWNER archiver")
    dumps = tmp_path / "dumps"
    for host, sample in (("host-a", "versant-insights"), ("host-b", "kestrel-mobility"), ("host-c", "sante-panel")):
        shutil.copytree(SAMPLES / sample, dumps / host)
    writer = site.net.writers[0]
    bin_folder = tmp_path.parent / f"{tmp_path.name}-bin"  # `archiver`, as this interpreter runs it
    bin_folder.mkdir()
    (bin_folder / "archiver").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m archiver "$@"\n')
    (bin_folder / "archiver").chmod(0o755)
    done = subprocess.run(
        writer.command(["bash", "-e", "-o", "pipefail", "-c", deployment_block()]),
        cwd=tmp_path,
        env={**site.environment(), "PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "ok: " in done.stdout  # db check
    assert "Versant" in done.stdout  # the claims query
    assert (tmp_path / "parquet-out" / "claim_citations").is_dir()

    lake = f"ducklake:postgres:dbname=archive host={site.net.server_address} user=archiver"
    data_path = f"s3://{BUCKET}/transcripts/"
    assert same_as_one_file(lake, data_path, [dumps], tmp_path) == []
    assert set(committed_hosts(lake)) == {writer.hostname}
    objects = site.objects()
    assert [key for key in objects if not key.startswith("transcripts/")] == []
    assert any(key.endswith(".parquet") for key in objects)

    # the credentials, nowhere: not readable through archiver sql either (httpfs copies them into settings)
    settings = "SELECT current_setting('s3_secret_access_key') AS k, current_setting('s3_session_token') AS t"
    shown = run("sql", settings, "--db", lake, "--format", "json")
    assert json.loads(shown) == [{"k": "", "t": ""}]
    refused = CliRunner().invoke(
        main, ["sql", f"SELECT count(*) FROM read_parquet('{data_path}**/*.parquet')", "--db", lake]
    )
    assert refused.exit_code == 2
    assert "reads local files only" in refused.output
    secrets = [site.settings["AWS_SECRET_ACCESS_KEY"], site.settings["PGPASSWORD"]]
    single = tmp_path / "single.duckdb"
    seen = {
        "the block's output": (done.stdout + done.stderr).encode(),
        "the catalog (pg_dump)": site.dump("archive").encode(),
        "the data path's objects": b"".join(objects.values()),
        "the export": b"".join(path.read_bytes() for path in (tmp_path / "parquet-out").rglob("*") if path.is_file()),
        "archiver sql's output": shown.encode(),
        "the store's request log": site.store.log.read_bytes(),
        "the catalog server's log": (site.catalog.root / "log").read_bytes(),
    }
    assert single.exists()
    for secret in secrets:
        assert [where for where, found in seen.items() if secret.encode() in found] == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dumps", "parquet-out", "single.duckdb"]


def test_a_named_duckdb_secret_is_used_and_one_that_is_not_there_is_said_in_one_line(here, tmp_path, monkeypatch):
    site = here
    lake_here = site.database()[1]
    data_path = f"s3://{BUCKET}/named/"
    run("db", "upgrade", "--db", lake_here, "--data-path", data_path)
    home = tmp_path / "home"
    home.mkdir()
    with duckdb.connect(config={"secret_directory": str(home / ".duckdb" / "stored_secrets")}) as con:
        install_extensions(con, [("httpfs", "httpfs")])
        s = site.settings
        host = site.store.endpoint.removeprefix("http://")
        con.execute(
            "CREATE PERSISTENT SECRET lake_store (TYPE s3, "
            f"KEY_ID '{s['AWS_ACCESS_KEY_ID']}', SECRET '{s['AWS_SECRET_ACCESS_KEY']}', "
            f"REGION 'us-east-1', ENDPOINT '{host}', URL_STYLE 'path', USE_SSL false, SCOPE 's3://{BUCKET}')"
        )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ARCHIVER_S3_SECRET", "lake_store")
    assert run("db", "check", "--db", lake_here).startswith("ok: ")
    monkeypatch.setenv("ARCHIVER_S3_SECRET", "no_such_secret")
    out = run("stats", "--db", lake_here, code=1)
    assert out == (
        "Error: $ARCHIVER_S3_SECRET=no_such_secret: DuckDB has no s3 secret of that name for "
        f"{data_path} (it would use 'lake_store'; make one with CREATE PERSISTENT SECRET, see docs/lakes.md)\n"
    )


@pytest.mark.slow
def test_writers_on_three_hosts_store_each_file_once(here, tmp_path):
    site = here
    lake_there, lake_here = site.database()
    data_path = f"s3://{BUCKET}/three/"
    batches = corpus(tmp_path / "in", folders=3, files=3)
    run("db", "upgrade", "--db", lake_here, "--data-path", data_path)  # made, so no writer races to make it
    plans = [batches, batches[1:] + batches[:1], batches[2:] + batches[:2]]
    writers = [
        on_host(site, host, ["ingest", *map(str, plan), "--db", lake_there, "--json", "--wait-for-writers"], tmp_path)
        for host, plan in zip(site.net.writers, plans, strict=True)
    ]
    summaries = [json.loads(finished(writer)) for writer in writers]
    stored = sum(s["files"] - len(s["claimed_elsewhere"]) - s["files_unchanged"] for s in summaries)
    assert stored == 9, summaries  # each file by exactly one writer
    assert same_as_one_file(lake_here, data_path, batches, tmp_path) == []
    assert set(committed_hosts(lake_here)) <= {"w1", "w2", "w3"}
    assert len(committed_hosts(lake_here)) == 9


@pytest.mark.slow
def test_a_writer_host_cut_off_mid_commit_then_the_rerun_is_exact(here, tmp_path):
    site = here
    lake_there, lake_here = site.database()
    data_path = f"s3://{BUCKET}/cut/"
    batches = corpus(tmp_path / "in", folders=3, files=3)
    run("db", "upgrade", "--db", lake_here, "--data-path", data_path)
    cut, other = site.net.writers[0], site.net.writers[1]
    # two files committed before the cut writer starts (by the host that reruns later), so that the rerun has
    # committed files to leave alone
    earlier = sorted(batches[0].glob("*.jsonl"))[:2]
    finished(on_host(site, other, ["ingest", *map(str, earlier), "--db", lake_there], tmp_path))
    committed_before = len(committed_hosts(lake_here))
    assert committed_before == 2
    one_per_commit = (  # a commit per file, so that the cut lands in a commit
        "import archiver.ingest.run as r, archiver.ingest.pipeline as p; r.GROUP_RECORDS = p.CHUNK_FILES = 1; "
        "from archiver.cli import main; main(prog_name='archiver')"
    )
    deadline = time.monotonic() + 120
    database = re.search(r"dbname=(\w+)", lake_here).group(1)
    with subprocess.Popen(
        site.psql_command(database), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as held:
        # the catalog's snapshots locked against writes, not reads, before the cut writer starts: its first commit
        # writes its Parquet objects, then waits for the lock to add its snapshot; there, mid-commit, its host is
        # cut off. (Taking the lock once some commits had landed raced the writer's next Parquet writes.)
        held.stdin.write("BEGIN; LOCK TABLE ducklake_snapshot IN EXCLUSIVE MODE; SELECT 'locked';\n")
        held.stdin.flush()
        assert held.stdout.readline().strip() == "BEGIN"
        assert held.stdout.readline().strip() == "LOCK TABLE"
        assert held.stdout.readline().strip() == "locked"
        puts = sum(method == "PUT" for method, _path in site.store.requests())
        first = subprocess.Popen(
            cut.command([sys.executable, "-c", one_per_commit, "ingest", *map(str, batches), "--db", lake_there]),
            cwd=tmp_path,
            env=site.environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted"
        while site.psql(waiting, database) == "0":
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        written = sum(method == "PUT" for method, _path in site.store.requests()) - puts
        cut.cut_off()
        cut.kill()
        held.stdin.write("ROLLBACK;\n")
        held.stdin.close()
    first.communicate(timeout=60)
    assert len(committed_hosts(lake_here)) == committed_before  # the cut writer committed nothing
    assert written > 0  # the commit the cut stopped had written objects

    client = site.client()  # as a commit the cut stopped halfway leaves its files: one more, for sure
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix="cut/")["Contents"]
    some = next(item["Key"] for item in listed if item["Key"].endswith(".parquet"))
    stray = some.rsplit("/", 1)[0] + "/ducklake-stray.parquet"
    client.copy_object(Bucket=BUCKET, Key=stray, CopySource={"Bucket": BUCKET, "Key": some})

    time.sleep(1)  # the cut host's leases are older than the lease below
    rerun = on_host(
        site, other, ["ingest", *map(str, batches), "--db", lake_there, "--json"], tmp_path, ARCHIVER_LEASE_SECONDS="1"
    )
    summary = json.loads(finished(rerun))
    assert summary["not_stored"] == []
    assert summary["files_unchanged"] == committed_before
    assert all("from writer w1:" in line and "silent for" in line for line in summary["leases_taken_over"]), summary

    check = on_host(site, other, ["db", "check", "--db", lake_there], tmp_path)
    out, err = check.communicate(timeout=120)
    out += err
    assert check.returncode == 1, out
    assert f"s3://{BUCKET}/{stray}" in out
    assert all(
        line.startswith(("problem: orphan-file: ", "  s3://", "1 integrity problems")) for line in out.splitlines()
    ), out
    unlisted = int(re.search(r"problem: orphan-file: (\d+) ", out).group(1))
    print(f"\ncut off after {committed_before} of 9 commits, {written} objects of the cut commit written; "
          f"{len(summary['leases_taken_over'])} leases taken over, {unlisted} objects unlisted")  # fmt: skip
    assert unlisted == written + 1, out  # what the cut commit wrote, and the one put there
    cleaned = finished(on_host(site, other, ["db", "cleanup", "--db", lake_there], tmp_path))
    assert f"deleted: s3://{BUCKET}/{stray}" in cleaned
    assert stray not in {item["Key"] for item in client.list_objects_v2(Bucket=BUCKET, Prefix="cut/")["Contents"]}
    assert finished(on_host(site, other, ["db", "check", "--db", lake_there], tmp_path)).startswith("ok: ")
    assert same_as_one_file(lake_here, data_path, batches, tmp_path) == []


def test_what_the_object_store_refuses_is_one_line_naming_the_lake(here, tmp_path):
    """A data path on a bucket that is not there failed the ingest with a traceback."""
    site = here
    lake_here = site.database()[1]
    result = CliRunner().invoke(
        main,
        ["ingest", str(SAMPLES / "versant-insights"), "--db", lake_here, "--data-path", "s3://no-such-bucket/lake/"],
    )
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"Error: {locate(lake_here).describe()}: the object store: HTTP Error: "), (
        result.output
    )
    assert "s3://no-such-bucket/lake/" in result.output
    assert "NoSuchBucket" in result.output
    assert site.settings["AWS_SECRET_ACCESS_KEY"] not in result.output
