"""The verify-demo samples, made by the real a2a-sdk 1.3.0 (run in the 1.3.0 venv).

1. Writes the synthetic survey table of the sample data layer, one CSV per wave
   (`data-layer/demo_flat_w1.csv`, `demo_flat_w2.csv`, `demo_flat_w3.csv`), from a seeded random
   generator. W3's rows carry the day each was fielded, and 20 pilot rows precede its fielded window.
2. Computes the Verify Demo Agent's answers from those CSVs with the standard library alone,
   independently of the data layer's DuckDB extractor (`data-layer/extractors.py`), so that
   `archiver verify` reproducing them is a real check.
3. Serves them with the SDK's server and records its client's traffic, exactly as
   make_samples_13.py does: `verify-demo/agent-card.json`, `rpc-v1.jsonl`, `stream-v1.sse`.
   One answer is altered before it is served (a mis-typed share), one cites a column the table
   does not have; one gives its shares rounded to two places, one counts only the rows inside its
   citation's fielded window.
"""

from __future__ import annotations

import asyncio
import copy
import csv
import io
import random
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT, Fragment, cit_summary, citation, copy_entry
from make_samples_13 import (  # importing it patches uuid4 for stable JSON-RPC ids
    SDK,
    Agent,
    artifact,
    jsonl_of,
    make_card,
    pb_citation,
    pb_data,
    pb_text,
    save_card,
    sse_events,
    write_bytes,
)

FR = Fragment("verify")
STUDY = "Verify Demo Tracker"
WAVES = {"W1 (June 2026)": ("demo_flat_w1.csv", 101), "W2 (July 2026)": ("demo_flat_w2.csv", 202)}
SEGMENTS = ("18-34", "35-54", "55-74")
COLUMNS = ("resp_id", "segment", "wt", "aware_b1", "consider_b1")
W3 = "W3 (August 2026)"
W3_FIELDED = (date(2026, 8, 3), date(2026, 8, 16))
PILOT_DAY = date(2026, 7, 27)


def survey(seed: int, rows: int = 120) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(rows):
        segment = SEGMENTS[rng.randrange(3)]
        aware = int(rng.random() < {"18-34": 0.55, "35-54": 0.45, "55-74": 0.35}[segment])
        consider = int(aware and rng.random() < 0.6)
        out.append(
            {
                "resp_id": f"R{seed}{i:04d}",
                "segment": segment,
                "wt": f"{rng.uniform(0.5, 2.0):.4f}",
                "aware_b1": aware,
                "consider_b1": consider,
            }
        )
    return out


def fielded_survey(seed: int, pilot: int = 20) -> list[dict]:
    """A wave whose rows say the day each was fielded: `pilot` rows a week before the window, then
    the wave's rows spread over the window's days."""
    start, end = W3_FIELDED
    days = (end - start).days + 1
    rows = survey(seed, 120 + pilot)
    for i, row in enumerate(rows):
        row["fielded_on"] = (PILOT_DAY if i < pilot else start + timedelta(days=i % days)).isoformat()
    return rows


def in_window(rows: list[dict]) -> list[dict]:
    start, end = W3_FIELDED
    return [r for r in rows if start.isoformat() <= r["fielded_on"] <= end.isoformat()]


def rounded(payload: dict, places: int = 2) -> dict:
    """The answer as an agent that rounds its shares states it."""
    out = copy.deepcopy(payload)
    for segment in out["segments"]:
        segment["share"] = round(segment["share"], places)
    return out


def write_table(name: str, rows: list[dict]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (OUT / "data-layer" / name).write_text(buffer.getvalue(), encoding="utf-8")


def funnel(rows: list[dict], column: str, weighted: bool) -> dict:
    """Weighted share answering 1 by segment, unweighted segment bases, total base."""
    segments = []
    for segment in SEGMENTS:
        mine = [r for r in rows if r["segment"] == segment]
        weights = [float(r["wt"]) if weighted else 1.0 for r in mine]
        share = sum(w * int(r[column]) for w, r in zip(weights, mine, strict=False)) / sum(weights)
        segments.append({"name": segment, "share": share, "n": len(mine)})
    return {"segments": segments, "total": len(rows)}


def cite(period: str, rows: list[dict], column: str, weight: str, fielded: str | None = None) -> dict:
    return citation(
        STUDY,
        period,
        "Online panel, adults 18-74",
        len(rows),
        "demo_flat",
        column,
        "extractFunnel",
        weight=weight,
        fielded=fielded,
    )


async def main():
    tables = {}
    for period, (name, seed) in WAVES.items():
        tables[period] = survey(seed)
        write_table(name, tables[period])
    w1, w2 = tables["W1 (June 2026)"], tables["W2 (July 2026)"]
    w3 = fielded_survey(303)
    write_table("demo_flat_w3.csv", w3)
    w3_fielded = in_window(w3)

    demo_agent = "Verify Demo Agent"
    card = make_card(
        demo_agent,
        "verify-demo.test",
        "Brand funnel answers from the Verify Demo Tracker, re-runnable from its documented data layer.",
        skill_id="funnel",
        skill_name="Brand funnel by age",
    )
    agent = Agent(card, "verify-demo.test")
    await save_card(agent, "verify-demo/agent-card.json")
    FR.agent(demo_agent, "verify-demo/agent-card.json", True, True)

    f_rpc = "verify-demo/rpc-v1.jsonl"
    ctx = "ctx-vd-rpc"
    scenarios = [
        (
            "msg-vd-001",
            "task-vd-aware-w1",
            "Brand awareness by age, W1?",
            "art-aware",
            "awareness",
            funnel(w1, "aware_b1", True),
            cite("W1 (June 2026)", w1, "aware_b1", "wt"),
        ),
        (
            "msg-vd-002",
            "task-vd-consider-w1",
            "Consideration by age, W1?",
            "art-consider",
            "consideration",
            None,
            cite("W1 (June 2026)", w1, "consider_b1", "wt"),
        ),
        (
            "msg-vd-003",
            "task-vd-purchase-w2",
            "Purchase intent by age, W2?",
            "art-purchase",
            "purchase intent",
            {
                "segments": [
                    {"name": s, "share": v, "n": n}
                    for s, v, n in (("18-34", 0.21, 40), ("35-54", 0.17, 44), ("55-74", 0.12, 36))
                ],
                "total": 120,
            },
            cite("W2 (July 2026)", w2, "purchase_b1", "wt"),
        ),
        (
            "msg-vd-005",
            "task-vd-consider-w2",
            "Consideration by age, W2, to two places?",
            "art-consider-w2",
            "consideration",
            rounded(funnel(w2, "consider_b1", True)),
            cite("W2 (July 2026)", w2, "consider_b1", "wt"),
        ),
        (
            "msg-vd-006",
            "task-vd-aware-w3",
            "Brand awareness by age, W3 fieldwork?",
            "art-aware-w3",
            "awareness",
            funnel(w3_fielded, "aware_b1", True),
            cite(W3, w3_fielded, "aware_b1", "wt", "/".join(d.isoformat() for d in W3_FIELDED)),
        ),
    ]
    altered = copy.deepcopy(funnel(w1, "consider_b1", True))
    altered["segments"][0]["share"] = round(altered["segments"][0]["share"] + 0.05, 2)  # mis-typed in a draft
    scenarios[1] = (*scenarios[1][:5], altered, *scenarios[1][6:])
    for msg_id, task_id, question, art_id, name, payload, cit in scenarios:
        await agent.send(
            msg_id,
            ctx,
            task_id,
            question,
            {
                "kind": "task",
                "steps": [
                    ("working", None),
                    artifact(art_id, name, [pb_text(question.rstrip("?")), pb_data(payload), pb_citation(cit)]),
                    ("completed", None),
                ],
            },
        )
        FR.add_copy(
            f"task:{task_id}",
            demo_agent,
            copy_entry(f_rpc, "completed", True, [cit_summary(cit)], [payload], 1),
            task_id=task_id,
            context_id=ctx,
        )
    data, n = jsonl_of(agent.rec.take())
    write_bytes(f_rpc, data)
    FR.file(
        f_rpc,
        "jsonl",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC client+server, in-process",
        n,
        "v1.0 JSON-RPC client log, SendMessage x5 against the sample data layer: awareness W1 (reproduced), "
        "consideration W1 with a share altered by hand (differs), purchase intent W2 citing a column the "
        "table lacks (not re-runnable), consideration W2 with shares rounded to two places (reproduced as "
        "rounded), awareness W3 over the rows inside its fielded window, 20 pilot rows before it left out "
        "(reproduced).",
    )
    FR.plant(
        "rerun-differs",
        "error",
        "task:task-vd-consider-w1",
        f_rpc,
        "The 18-34 consideration share was altered to "
        + repr(altered["segments"][0]["share"])
        + "; the data layer re-derives "
        + repr(funnel(w1, "consider_b1", True)["segments"][0]["share"])
        + ".",
    )
    FR.plant(
        "not-rerunnable",
        "warning",
        "task:task-vd-purchase-w2",
        f_rpc,
        "The citation names column purchase_b1, which the W2 table does not have.",
    )

    f_sse = "verify-demo/stream-v1.sse"
    ctx = "ctx-vd-stream"
    payload = funnel(w2, "aware_b1", False)
    cit = cite("W2 (July 2026)", w2, "aware_b1", "unweighted")
    await agent.send(
        "msg-vd-004",
        ctx,
        "task-vd-aware-w2",
        "Unweighted brand awareness by age, W2?",
        {
            "kind": "task",
            "steps": [
                ("working", "Querying demo_flat (aware_b1), W2 snapshot"),
                artifact("art-aware-w2", "awareness", [pb_data(payload)], False, False),
                artifact("art-aware-w2", None, [pb_citation(cit)], True, True),
                ("completed", None),
            ],
        },
        streaming=True,
    )
    raw = agent.rec.take()[0]["response"]
    write_bytes(f_sse, raw)
    FR.file(
        f_sse,
        "sse",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC SendStreamingMessage",
        sse_events(raw),
        'v1.0 JSON-RPC SSE: unweighted awareness W2, numbers in chunk 1, citation (weight "unweighted") '
        "appended in chunk 2; reproduced by the data layer.",
    )
    FR.add_copy(
        "task:task-vd-aware-w2",
        demo_agent,
        copy_entry(f_sse, "completed", True, [cit_summary(cit)], [payload], 1),
        task_id="task-vd-aware-w2",
        context_id=ctx,
    )
    FR.write()


if __name__ == "__main__":
    asyncio.run(main())
