"""Makes sample_transcripts/java-meridian/ with the official Java SDK, and the manifest fragment `java.json`.

The scenario (questions, answers, citations, ids and times) is defined here, once: the Java program
(`MakeSamples`, this Maven project) plays it with the SDK's own server, JPA task store and clients and writes
the wire files; this script starts the databases the JPA store writes to, exports their tables as a user
would, and writes the fragment from the same definitions, never by parsing the files.

Needs Java 17 and Maven 3.8 (`mvn`), and Debian's PostgreSQL and MariaDB servers (`postgresql`,
`mariadb-server`), started here on 127.0.0.1 like the tests' servers (`tests/servers.py`). `MAVEN_REPO_LOCAL`
names the Maven repository to use (default: Maven's own).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(REPO))

from common import CIT_MT, EXT_URI, OUT, TS, Fragment, cit_summary, citation, copy_entry  # noqa: E402

from tests import servers  # noqa: E402

FOLDER = "java-meridian"
AGENT = "Meridian Retail Insights Agent"
SDK = "a2a-java-sdk 1.0.0.Alpha3 (io.github.a2asdk)"
TABLE = "a2a_tasks"  # the JPA store's table (JpaTask)

CIT_BASKET = citation(
    "Meridian Shopper Panel",
    "2026-Q1",
    "Panel shoppers, all stores",
    1480,
    "meridian_panel",
    "basket_eur",
    "extractMean",
    weight="unweighted",
)
CIT_DWELL = citation(
    "Meridian Shopper Panel",
    "2026-Q1",
    "Panel shoppers, flagship stores",
    392,
    "meridian_panel",
    "dwell_min",
    "extractMean",
    weight="unweighted",
)
CIT_LOYALTY = citation(
    "Meridian Shopper Panel", "2026-Q1", "Loyalty members", 905, "meridian_panel", "loyalty_tier", "extractShare"
)
CIT_MARGIN_ZERO = citation(
    "Meridian Category Review",
    "FY2025",
    "Grocery categories",
    0,
    "meridian_categories",
    "gross_margin",
    "extractMean",
    weight="unweighted",
)
CIT_PROMO = citation(
    "Meridian Category Review",
    "FY2025",
    "Promoted categories",
    64,
    "meridian_categories",
    "promo_uplift",
    "extractMean",
    weight="unweighted",
)
CIT_VISITS = citation(
    "Meridian Shopper Panel",
    "2026-Q1",
    "Panel shoppers, all stores",
    1480,
    "meridian_panel",
    "visits_pw",
    "extractMean",
    weight="unweighted",
)
CIT_CHANNEL = citation(
    "Meridian Shopper Panel",
    "2026-Q1",
    "Panel shoppers, all stores",
    1480,
    "meridian_panel",
    "channel",
    "extractShare",
)

Q_BASKET = {"mean_basket_eur": 38.4, "median_basket_eur": 31.5, "total": 1480}
Q_FOOTFALL = {"weekly_footfall": [{"store": "Leeds", "visits": 12840}, {"store": "York", "visits": 9310}]}
Q_DWELL = {"mean_dwell_min": 17.5, "total": 392}
Q_LOYALTY = {
    "tiers": [{"name": "gold", "share": 0.18}, {"name": "silver", "share": 0.34}, {"name": "bronze", "share": 0.48}]
}
Q_MARGIN = {"mean_gross_margin": 0.236, "categories": 41}
Q_PROMO = {"mean_uplift": 0.112, "categories": 64}
Q_VISITS = {"visits_per_week": 2.1, "total": 1480}
Q_CHANNEL = {"channels": [{"name": "store", "share": 0.66}, {"name": "online", "share": 0.34}]}

WORKING_TEXT = "Reading the Meridian panel extract."


def typed(c: dict) -> dict:
    """A citation Part as a Java agent sends it: the SDK's DataPart has no media type field, so the type
    travels in Part metadata."""
    return {"data": c, "metadata": {"mediaType": CIT_MT}}


def answer(artifacts: list[tuple[str, list[dict]]], working: bool = False, chunked: bool = False) -> list[dict]:
    """The events of one answer: the task (submitted), optionally a WORKING status with the agent's words, the
    artifacts (chunked: the last one appended to the first), then COMPLETED."""
    events: list[dict] = [{"kind": "task", "state": "submitted", "at": TS["submitted"]}]
    if working:
        message = {"message_id": "msg-jmr-working", "parts": [{"text": WORKING_TEXT}]}
        events.append({"kind": "status", "state": "working", "at": TS["working"], "message": message})
    for place, (artifact_id, parts) in enumerate(artifacts):
        chunk = {"kind": "artifact", "artifact_id": artifact_id, "name": artifact_id, "parts": parts}
        if chunked:
            chunk |= {"append": place > 0, "last_chunk": place == len(artifacts) - 1}
        events.append(chunk)
    events.append({"kind": "status", "state": "completed", "at": TS["completed"]})
    return events


# question -> (task id, context id, events)
ANSWERS = {
    "Mean basket size, Q1 2026?": (
        "task-jmr-rpc-basket",
        "ctx-jmr-rpc",
        answer([("basket", [{"data": Q_BASKET}, typed(CIT_BASKET)])]),
    ),
    "Weekly footfall by store?": (
        "task-jmr-rpc-footfall",
        "ctx-jmr-rpc",
        answer([("footfall", [{"data": Q_FOOTFALL}])]),
    ),
    "Mean dwell time in flagship stores?": (
        "task-jmr-rpc-dwell",
        "ctx-jmr-rpc",
        answer([("dwell", [{"data": Q_DWELL}, {"data": CIT_DWELL}])]),
    ),
    "Loyalty tiers, Q1 2026?": (
        "task-jmr-stream-loyalty",
        "ctx-jmr-stream",
        answer([("loyalty", [{"data": Q_LOYALTY}]), ("loyalty", [typed(CIT_LOYALTY)])], working=True, chunked=True),
    ),
    "Gross margin of grocery categories?": (
        "task-jmr-rest-margin",
        "ctx-jmr-rest-margin",
        answer([("margin", [{"data": Q_MARGIN}, typed(CIT_MARGIN_ZERO)])]),
    ),
    "Promotion uplift, FY2025?": (
        "task-jmr-rest-promo",
        "ctx-jmr-rest",
        answer([("promo", [{"data": Q_PROMO}]), ("promo-citation", [typed(CIT_PROMO)])], working=True),
    ),
    "Store visits a week?": (
        "task-jmr-db-visits",
        "ctx-jmr-db",
        answer([("visits", [{"data": Q_VISITS}, typed(CIT_VISITS)])]),
    ),
    "Channel split, Q1 2026?": (
        "task-jmr-db-channel",
        "ctx-jmr-db",
        answer([("channel", [{"data": Q_CHANNEL}, typed(CIT_CHANNEL)])]),
    ),
}


def ask(question: str, transport: str, op: str = "send", **call) -> dict:
    task_id, context_id, _ = ANSWERS[question]
    number = list(ANSWERS).index(question) + 1
    message = {
        "message_id": f"msg-jmr-q{number}",
        "task_id": task_id,
        "context_id": context_id,
        "parts": [{"text": question}],
    }
    return {"op": op, "transport": transport, "message": message, **call}


RPC, OBJECTS = f"{FOLDER}/rpc-v1.jsonl", f"{FOLDER}/client-objects.jsonl"
WIRE_CALLS = [
    {"op": "card", "transport": "jsonrpc", "file": f"{FOLDER}/agent-card.json", "keep": "response"},
    ask("Mean basket size, Q1 2026?", "jsonrpc", file=RPC, keep="both", objects=OBJECTS),
    ask("Weekly footfall by store?", "jsonrpc", file=RPC, keep="both", objects=OBJECTS),
    ask("Mean dwell time in flagship stores?", "jsonrpc", file=RPC, keep="both", objects=OBJECTS),
    {"op": "get", "transport": "jsonrpc", "task_id": "task-jmr-rpc-basket", "file": RPC, "keep": "both"},
    {"op": "get", "transport": "jsonrpc", "task_id": "task-jmr-missing", "file": RPC, "keep": "both", "fails": True},
    ask(
        "Loyalty tiers, Q1 2026?", "jsonrpc", "stream", file=f"{FOLDER}/stream-v1.sse", keep="response", objects=OBJECTS
    ),
    ask("Gross margin of grocery categories?", "rest", file=f"{FOLDER}/rest-send.json", keep="response"),
    ask("Promotion uplift, FY2025?", "rest", "stream", file=f"{FOLDER}/rest-stream-v1.sse", keep="response"),
    {
        "op": "list",
        "transport": "rest",
        "context_id": "ctx-jmr-rest",
        "file": f"{FOLDER}/rest-list-tasks.json",
        "keep": "response",
    },
]
STORE_CALLS = [ask("Store visits a week?", "jsonrpc"), ask("Channel split, Q1 2026?", "jsonrpc")]
DUMPS = {"postgresql": f"{FOLDER}/a2a-tasks-postgresql.jsonl", "mariadb": f"{FOLDER}/a2a-tasks-mariadb.jsonl"}


def scenario(pg_port: int, mariadb_port: int) -> dict:
    card = {
        "name": AGENT,
        "description": "Retail panel analytics over A2A, served by the official Java SDK.",
        "version": "1.0.0",
        "url": "http://meridian.example/a2a",
        "extension_uri": EXT_URI,
        "media_type": CIT_MT,
        "skills": [{"id": "panel-metrics", "name": "Panel metrics", "description": "Shopper panel figures, cited."}],
    }
    runs = [
        {"jdbc": f"jdbc:postgresql://127.0.0.1:{pg_port}/agents?user=postgres", "calls": WIRE_CALLS},
        {"jdbc": f"jdbc:mariadb://127.0.0.1:{mariadb_port}/agents?user=root", "calls": STORE_CALLS},
    ]
    return {"card": card, "answers": {q: events for q, (_, _, events) in ANSWERS.items()}, "runs": runs}


def maven(*goals: str) -> list[str]:
    repo = os.environ.get("MAVEN_REPO_LOCAL")
    return ["mvn", "-B", "-q", *([f"-Dmaven.repo.local={repo}"] if repo else []), *goals]


def build() -> str:
    """Compiles MakeSamples; returns its class path. Offline when the Maven repository holds the pinned
    artifacts already (after the first resolve), else Maven fetches them from Maven Central."""
    classpath = HERE / "target" / "classpath.txt"
    goals = ("compiler:compile", "dependency:build-classpath", f"-Dmdep.outputFile={classpath}")
    if subprocess.run(maven("-o", *goals), cwd=HERE, capture_output=True).returncode != 0:
        subprocess.run(maven(*goals), cwd=HERE, check=True)
    resources = HERE / "src" / "main" / "resources"  # META-INF/services, put on the class path as it is
    return f"{HERE / 'target' / 'classes'}:{resources}:{classpath.read_text().strip()}"


def play(classpath: str, spec: dict, out: Path) -> None:
    """Runs MakeSamples on `spec`, writing the wire files under `out`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "scenario.json")
        path.write_text(json.dumps(spec), encoding="utf-8")
        settings = [
            "-Duser.timezone=UTC",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dorg.jboss.logging.provider=slf4j",
        ]
        subprocess.run(
            ["java", *settings, "-cp", classpath, "archiver.samples.MakeSamples", str(path), str(out)], check=True
        )


PG_EXPORT = f"SELECT row_to_json(t) FROM {TABLE} t ORDER BY task_id"
MARIADB_EXPORT = (
    "SELECT JSON_OBJECT('task_id', task_id, 'context_id', context_id, 'state', state, 'status_timestamp', "
    f"status_timestamp, 'task_data', task_data, 'finalized_at', finalized_at) FROM {TABLE} ORDER BY task_id"
)


def export(pg: servers.Server, mariadb: servers.Server, out: Path) -> None:
    """Each table as a user exports it: one JSON object a row (psql's unaligned output of `row_to_json`,
    the mariadb client's raw batch output of `JSON_OBJECT`)."""
    psql = ["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "agents", "-A", "-t", "-c"]
    rows = subprocess.run([*psql, PG_EXPORT], check=True, capture_output=True, env={**os.environ, "PGTZ": "UTC"})
    (out / DUMPS["postgresql"]).write_bytes(rows.stdout)
    client = ["mariadb", "-h", "127.0.0.1", "-P", str(mariadb.port), "-u", "root", "-N", "-B", "-r", "agents", "-e"]
    rows = subprocess.run([*client, MARIADB_EXPORT], check=True, capture_output=True)
    (out / DUMPS["mariadb"]).write_bytes(rows.stdout)


@contextmanager
def stores() -> Iterator[tuple[servers.Server, servers.Server]]:
    """A throwaway PostgreSQL and MariaDB on 127.0.0.1, each with an empty database `agents`."""
    with servers.postgres() as pg, servers.mariadb() as mariadb:
        pg.createdb("agents")
        subprocess.run(
            ["mariadb", "-h", "127.0.0.1", "-P", str(mariadb.port), "-u", "root", "-e", "CREATE DATABASE agents"],
            check=True,
        )
        yield pg, mariadb


def make(pg: servers.Server, mariadb: servers.Server, out: Path = OUT) -> None:
    """The samples under `out`: the SDK's wire files, and the tables its JPA store wrote to `pg` and `mariadb`."""
    play(build(), scenario(pg.port, mariadb.port), out)
    export(pg, mariadb, out)


# --- the manifest fragment --------------------------------------------------------------------------------

STORE_MADE_BY = f"{SDK} JpaDatabaseTaskStore (built from its v1.0.0.Alpha3 source), Hibernate ORM 7.1.18"


def files(fr: Fragment) -> None:
    server = f"{SDK}: its JSON-RPC and REST handlers (the reference routes' serialisation) and its clients"
    fr.file(
        RPC,
        "jsonl",
        ["1.0-jsonrpc"],
        server,
        10,
        '3 SendMessage (blocking) → {"task"}, GetTask, and GetTask of an unknown id → error; '
        "request and response bodies a line each",
    )
    fr.file(
        f"{FOLDER}/stream-v1.sse",
        "sse",
        ["1.0-jsonrpc"],
        server,
        5,
        "SendStreamingMessage: task, WORKING with the agent's words, numbers in chunk 1, "
        "citation appended in chunk 2, COMPLETED",
    )
    fr.file(f"{FOLDER}/rest-send.json", "json", ["1.0-rest"], server, 1, 'REST POST /message:send → {"task"}')
    fr.file(
        f"{FOLDER}/rest-stream-v1.sse",
        "sse",
        ["1.0-rest"],
        server,
        5,
        "REST POST /message:stream: bare StreamResponse events; the citation in its own artifact",
    )
    fr.file(
        f"{FOLDER}/rest-list-tasks.json",
        "json",
        ["1.0-rest"],
        server,
        1,
        "REST GET /tasks?contextId=…: ListTasks without includeArtifacts, so the SDK leaves the artifacts out",
    )
    fr.file(
        OBJECTS,
        "jsonl",
        ["java-client-objects"],
        f"{SDK} client results, JsonUtil.toJson",
        8,
        "What the JSON-RPC client returned (3 Tasks, the 5 events of the stream), "
        "as the SDK's own JSON serialiser writes them",
    )
    fr.file(
        DUMPS["postgresql"],
        "jsonl",
        ["java-jpa-store"],
        f"{STORE_MADE_BY}, PostgreSQL; psql row_to_json",
        6,
        "The a2a_tasks table of the wire run: each task's JSON in task_data",
    )
    fr.file(
        DUMPS["mariadb"],
        "jsonl",
        ["java-jpa-store"],
        f"{STORE_MADE_BY}, MariaDB (for MySQL); JSON_OBJECT",
        2,
        "The a2a_tasks table of a second run whose store was MariaDB",
    )


def copy(fr: Fragment, question: str, path: str, citations: list[dict], data: list[dict], texts: int = 0) -> None:
    task_id, context_id, _ = ANSWERS[question]
    entry = copy_entry(path, "completed", True, citations, data, texts)
    fr.add_copy(f"task:{task_id}", AGENT, entry, task_id=task_id, context_id=context_id)


def plant(fr: Fragment, rule: str, severity: str, question: str, paths: list[str], what: str) -> None:
    for path in paths:
        fr.plant(rule, severity, f"task:{ANSWERS[question][0]}", path, what)


def results(fr: Fragment) -> None:
    pg, maria = DUMPS["postgresql"], DUMPS["mariadb"]
    for path in (RPC, OBJECTS, pg):
        copy(fr, "Mean basket size, Q1 2026?", path, [cit_summary(CIT_BASKET)], [Q_BASKET])
        copy(fr, "Weekly footfall by store?", path, [], [Q_FOOTFALL])
        copy(fr, "Mean dwell time in flagship stores?", path, [cit_summary(CIT_DWELL, inferred=True)], [Q_DWELL])
    for path in (f"{FOLDER}/stream-v1.sse", OBJECTS, pg):
        copy(fr, "Loyalty tiers, Q1 2026?", path, [cit_summary(CIT_LOYALTY)], [Q_LOYALTY], 1)
    for path in (f"{FOLDER}/rest-send.json", pg):
        copy(fr, "Gross margin of grocery categories?", path, [cit_summary(CIT_MARGIN_ZERO, valid=False)], [Q_MARGIN])
    for path in (f"{FOLDER}/rest-stream-v1.sse", pg):
        copy(fr, "Promotion uplift, FY2025?", path, [cit_summary(CIT_PROMO)], [Q_PROMO], 1)
    copy(fr, "Promotion uplift, FY2025?", f"{FOLDER}/rest-list-tasks.json", [], [])  # no history either
    copy(fr, "Store visits a week?", maria, [cit_summary(CIT_VISITS)], [Q_VISITS])
    copy(fr, "Channel split, Q1 2026?", maria, [cit_summary(CIT_CHANNEL)], [Q_CHANNEL])
    fr.error(RPC, 1)


def planted(fr: Fragment) -> None:
    pg = DUMPS["postgresql"]
    plant(
        fr,
        "uncited-result",
        "error",
        "Weekly footfall by store?",
        [RPC, OBJECTS, pg],
        "Java agent states 2 footfall counts with no citation Part.",
    )
    plant(
        fr,
        "citation-type-lost",
        "error",
        "Mean dwell time in flagship stores?",
        [RPC, OBJECTS, pg],
        "the SDK's DataPart has no media type field; this agent left it out of the Part's metadata too.",
    )
    plant(
        fr,
        "invalid-citation",
        "error",
        "Gross margin of grocery categories?",
        [f"{FOLDER}/rest-send.json", pg],
        "citation base.n 0.",
    )
    plant(
        fr,
        "dropped-part",
        "error",
        "Promotion uplift, FY2025?",
        [f"{FOLDER}/rest-list-tasks.json"],
        "ListTasks without includeArtifacts: the copy lacks the citation (and the numbers).",
    )


def fragment() -> Fragment:
    fr = Fragment("java")
    files(fr)
    fr.agent(AGENT, f"{FOLDER}/agent-card.json", True, True)
    results(fr)
    planted(fr)
    return fr


def main() -> None:
    missing = [tool for tool in ("java", "mvn", "psql", "mariadb") if shutil.which(tool) is None]
    if missing or servers.pg_bin() is None or not servers.mariadb_installed():
        sys.exit(f"make_samples_java.py: needs Java 17, Maven, PostgreSQL and MariaDB; missing {missing or 'a server'}")
    with stores() as (pg, mariadb):
        make(pg, mariadb)
    fragment().write()


if __name__ == "__main__":
    main()
