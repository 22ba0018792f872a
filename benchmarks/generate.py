"""Synthetic but realistic A2A transcript corpora, deterministic for a seed, with ground truth.

The dialect mix follows `sample_transcripts/`: v1.0 and v0.3 JSON-RPC logs (JSON Lines), v0.3 REST
logs, v1.0 SSE captures of streamed tasks with chunked artifacts (the citation appended in a later
chunk), and SDK task-store SQLite files. Each result states 1 to 20 numbers; a share of results are
uncited, carry an invalid citation, lose their citation's media type through a 0.3 hop, or cite a
small base. A cited result states the values its citation's quantities have (the same in every result
citing the same study, period, base, weight and source), so no two results conflict unless planted.
`truth.json` counts what was planted, for tests to compare with ingest and audit.

    python -m benchmarks.generate --tasks 20000 --out benchmarks/corpus --seed 7
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson

MEDIA_TYPE = "application/vnd.upperhand.citations+json"
STUDIES = [
    ("Versant Mega Tracker", ["W4 (February 2026)", "W5 (March 2026)", "W6 (April 2026)"], "versant_flat"),
    ("Étude Santé 2026", ["Vague 1 (mars 2026)", "Vague 2 (mai 2026)"], "sante_panel"),
    ("Footfall Monitor", ["2026-Q1", "2026-Q2"], "footfall_daily"),
]
COLUMNS = [f"s{i}r{j}" for i in range(10, 20) for j in range(1, 6)]
RARE_COLUMN = "s09r1"
"""A column about 0.1% of citations name (a twentieth of the first column's), for selective queries."""
FUNCTIONS = ["extractFunnel", "extractDistribution", "extractMean", "extractShare"]
SEGMENTS = ["18-24", "25-34", "35-44", "45-54", "55-64", "65-74", "North", "South", "East", "West"]
# share of results: (uncited, invalid citation, small base); type-lost comes from the 0.3 compat files
UNCITED, INVALID, SMALL = 0.05, 0.03, 0.02
TASKS_PER_FILE = 500
KINDS = ("v1-rpc", "v03-rpc", "v03-rest", "v1-sse", "v03-compat", "store")
WEIGHTS = (30, 20, 10, 25, 5, 10)


@dataclass
class Truth:
    tasks: int = 0
    records: int = 0
    citations: int = 0
    claims: int = 0
    files: int = 0
    bytes: int = 0
    planted: Counter = field(default_factory=Counter)
    files_by_kind: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {
            "tasks": self.tasks,
            "records": self.records,
            "citations": self.citations,
            "claims": self.claims,
            "files": self.files,
            "bytes": self.bytes,
            "planted": dict(self.planted),
            "files_by_kind": dict(self.files_by_kind),
        }


def consistent(data: dict, citation: dict) -> dict:
    """`data` with each value the one its quantity has under `citation`: drawn from a hash of the citation
    (but its base n, which may be planted) and the value's place, so every result citing the same numbers
    states the same ones. The shape (keys, segments) is kept as drawn."""

    def drawn(*place) -> float:
        cited = (citation["study"], citation["period"], citation["base"]["name"], citation["weight"])
        source = tuple(citation["source"].values())
        digest = hashlib.blake2b(repr((cited, source, place)).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    made: dict = {"total": 200 + int(drawn("total") * 8801)}
    if "segments" in data:
        made["segments"] = [
            {"name": row["name"], "share": round(drawn(row["name"], "share"), 4),
             "n": 20 + int(drawn(row["name"], "n") * 2981)}
            for row in data["segments"]
        ]  # fmt: skip
    if "mean" in data:
        made["mean"] = round(1 + 9 * drawn("mean"), 3)
    return made


class Corpus:
    def __init__(self, out: Path, seed: int) -> None:
        self.out, self.rng, self.truth = out, random.Random(seed), Truth()
        self.counter = 0

    # --- one result -------------------------------------------------------------------------
    def answer(self, kind: str) -> tuple[str, dict, dict | None]:
        """(task id, quantitative data, citation or None), planting problems at the set rates."""
        rng = self.rng
        self.counter += 1
        task_id = f"task-{self.counter:09d}"
        claims = rng.randint(1, 20)
        segments = rng.sample(SEGMENTS, k=min(len(SEGMENTS), (claims - 1) // 2))
        data: dict = {"total": rng.randint(200, 9000)}
        if segments:
            data["segments"] = [
                {"name": s, "share": round(rng.random(), 4), "n": rng.randint(20, 3000)} for s in segments
            ]
        if len(segments) * 2 + 1 < claims:
            data["mean"] = round(rng.uniform(1, 10), 3)
        study, periods, table = rng.choice(STUDIES)
        roll = rng.random()
        if roll < UNCITED:
            self.truth.planted["uncited-result"] += 1
            citation = None
        else:
            citation = {
                "study": study,
                "period": rng.choice(periods),
                "fielded": "2026-04-02/2026-04-19",
                "base": {"name": "Adults 18-74", "n": rng.randint(120, 5000)},
                "weight": "main_weight",
                "source": {"table": table, "column": rng.choice(COLUMNS), "function": rng.choice(FUNCTIONS)},
            }
            if citation["source"]["column"] == COLUMNS[0] and data["total"] % 20 == 0:
                citation["source"]["column"] = RARE_COLUMN  # drawn from what is drawn already: the rest stays
            if roll < UNCITED + INVALID:
                citation["base"]["n"] = 0
                self.truth.planted["invalid-citation"] += 1
            elif roll < UNCITED + INVALID + SMALL:
                citation["base"]["n"] = rng.randint(5, 29)
                self.truth.planted["small-base"] += 1
            if kind == "v03-compat":
                self.truth.planted["citation-type-lost"] += 1
            self.truth.citations += 1
            data = consistent(data, citation)
        self.truth.tasks += 1
        self.truth.claims += claims
        return task_id, data, citation

    # --- dialects ---------------------------------------------------------------------------
    @staticmethod
    def v1_parts(data: dict, citation: dict | None) -> list[dict]:
        parts = [{"text": "Here are the figures you asked for."}, {"data": data, "mediaType": "application/json"}]
        if citation is not None:
            parts.append({"data": citation, "mediaType": MEDIA_TYPE})
        return parts

    @staticmethod
    def v03_parts(data: dict, citation: dict | None, typed: bool = True) -> list[dict]:
        parts = [{"kind": "text", "text": "Here are the figures you asked for."}, {"kind": "data", "data": data}]
        if citation is not None:
            part = {"kind": "data", "data": citation}
            if typed:
                part["metadata"] = {"mediaType": MEDIA_TYPE}
            parts.append(part)
        return parts

    def v1_task(self, task_id: str, parts: list[dict]) -> dict:
        return {
            "id": task_id,
            "contextId": f"ctx-{task_id}",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": self.timestamp()},
            "artifacts": [{"artifactId": f"{task_id}-answer", "name": "answer", "parts": parts}],
        }

    def timestamp(self) -> str:
        return (
            f"2026-{self.rng.randint(1, 11):02d}-{self.rng.randint(1, 28):02d}T{self.rng.randint(0, 23):02d}:"
            f"{self.rng.randint(0, 59):02d}:00.{self.rng.randint(0, 999999):06d}Z"
        )

    def question(self, rpc_id: int, method: str, kind_tagged: bool) -> dict:
        part = (
            {"kind": "text", "text": "What share of adults are aware?"}
            if kind_tagged
            else {"text": "What share of adults are aware?"}
        )
        message = {
            "messageId": f"q-{self.counter + 1:09d}",
            "role": "user" if kind_tagged else "ROLE_USER",
            "parts": [part],
        }
        if kind_tagged:
            message["kind"] = "message"
        return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": {"message": message}}

    def lines_for(self, kind: str) -> list[bytes]:
        """The records of one task in a line-oriented dialect."""
        rpc_id = self.counter + 1
        if kind == "v1-rpc":
            request = self.question(rpc_id, "SendMessage", False)
            task_id, data, citation = self.answer(kind)
            body = {
                "jsonrpc": "2.0",
                "id": rpc_id,
                "result": {"task": self.v1_task(task_id, self.v1_parts(data, citation))},
            }
        elif kind in ("v03-rpc", "v03-compat"):
            request = self.question(rpc_id, "message/send", True)
            task_id, data, citation = self.answer(kind)
            task = self.v1_task(task_id, self.v03_parts(data, citation, typed=kind == "v03-rpc"))
            task.update(kind="task", status={"state": "completed", "timestamp": task["status"]["timestamp"]})
            body = {"jsonrpc": "2.0", "id": rpc_id, "result": task}
        else:  # v03-rest
            request = {
                "message": {"messageId": f"q-{rpc_id:09d}", "role": "ROLE_USER", "content": [{"text": "What share?"}]}
            }
            task_id, data, citation = self.answer(kind)
            parts = [{"text": "Here are the figures."}, {"data": {"data": data}}]
            if citation is not None:
                parts.append({"data": {"data": citation}, "metadata": {"mediaType": MEDIA_TYPE}})
            task = self.v1_task(task_id, parts)
            body = {"task": task}
        return [orjson.dumps(request), orjson.dumps(body)]

    def sse_events(self) -> list[bytes]:
        task_id, data, citation = self.answer("v1-sse")
        context = f"ctx-{task_id}"

        def event(result: dict) -> bytes:
            return b"data: " + orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": result}) + b"\r\n\r\n"

        parts = self.v1_parts(data, citation)
        events = [
            event({"task": {"id": task_id, "contextId": context, "status": {"state": "TASK_STATE_SUBMITTED"}}}),
            event(
                {"statusUpdate": {"taskId": task_id, "contextId": context, "status": {"state": "TASK_STATE_WORKING"}}}
            ),
            event(
                {
                    "artifactUpdate": {
                        "taskId": task_id,
                        "contextId": context,
                        "artifact": {"artifactId": f"{task_id}-answer", "name": "answer", "parts": parts[:2]},
                    }
                }
            ),
        ]
        if citation is not None:
            events.append(
                event(
                    {
                        "artifactUpdate": {
                            "taskId": task_id,
                            "contextId": context,
                            "append": True,
                            "lastChunk": True,
                            "artifact": {"artifactId": f"{task_id}-answer", "parts": parts[2:]},
                        }
                    }
                )
            )
        events.append(
            event(
                {
                    "statusUpdate": {
                        "taskId": task_id,
                        "contextId": context,
                        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": self.timestamp()},
                    }
                }
            )
        )
        return [b": keep-alive\r\n\r\n", *events]

    # --- files ------------------------------------------------------------------------------
    def write_file(self, kind: str, index: int, tasks: int) -> None:
        suffix = {"v1-sse": "sse", "store": "sqlite"}.get(kind, "jsonl")
        path = self.out / kind / f"{kind}-{index:05d}.{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "store":
            self.write_store(path, tasks)
        else:
            chunks = []
            for _ in range(tasks):
                if kind == "v1-sse":
                    events = self.sse_events()
                    chunks += events
                    self.truth.records += len(events) - 1  # the keep-alive comment is no record
                else:
                    lines = self.lines_for(kind)
                    chunks += [line + b"\n" for line in lines]
                    self.truth.records += len(lines)
            path.write_bytes(b"".join(chunks))
        self.truth.files += 1
        self.truth.files_by_kind[kind] += 1
        self.truth.bytes += path.stat().st_size

    def write_store(self, path: Path, tasks: int) -> None:
        path.unlink(missing_ok=True)
        con = sqlite3.connect(path)
        con.execute("""CREATE TABLE tasks (id VARCHAR(36) PRIMARY KEY, context_id VARCHAR(36) NOT NULL,
            kind VARCHAR(16) NOT NULL, owner VARCHAR(255), last_updated DATETIME, status JSON NOT NULL,
            artifacts JSON, history JSON, protocol_version VARCHAR(16), metadata JSON)""")
        rows = []
        for _ in range(tasks):
            task_id, data, citation = self.answer("store")
            if self.rng.random() < 0.5:
                task = self.v1_task(task_id, self.v1_parts(data, citation))
                version = "1.0"
            else:
                task = self.v1_task(task_id, self.v03_parts(data, citation))
                task["status"]["state"] = "completed"
                version = None
            rows.append(
                (
                    task_id,
                    task["contextId"],
                    "task",
                    None,
                    None,
                    json.dumps(task["status"]),
                    json.dumps(task["artifacts"]),
                    "[]",
                    version,
                    None,
                )
            )
        con.executemany("INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        con.commit()
        con.close()
        self.truth.records += tasks


def generate(out: Path, tasks: int, seed: int = 7, tasks_per_file: int = TASKS_PER_FILE) -> dict:
    """Write a corpus of `tasks` results under `out`; returns (and writes) its ground truth."""
    corpus = Corpus(out, seed)
    out.mkdir(parents=True, exist_ok=True)
    remaining, index = tasks, 0
    while remaining > 0:
        kind = corpus.rng.choices(KINDS, weights=WEIGHTS)[0]
        count = min(remaining, tasks_per_file)
        corpus.write_file(kind, index, count)
        remaining -= count
        index += 1
    truth = corpus.truth.as_dict()
    (out / "truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    (out / ".archiverignore").write_text("truth.json\n")
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/corpus"))
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.tasks, args.seed), indent=1))


if __name__ == "__main__":
    main()
