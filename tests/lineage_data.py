"""A small archive for the query, show and export tests: every kind of citation, known exactly."""

from __future__ import annotations

from .transcripts import CITATIONS_MT, citation, jsonrpc_result, v1_task

MALICIOUS = "O'Brien\"; DROP TABLE claims; -- ' OR '1'='1"
SCRIPT_STUDY = "<script>alert(1)</script>"


def card(name: str) -> dict:
    return {
        "name": name,
        "url": "https://agents.example/a2a",
        "version": "1.0",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": [CITATIONS_MT],
        "skills": [],
    }


def task(
    task_id: str, parts: list[dict], when: str = "2026-04-20T10:00:00Z", context_id: str = "ctx-1", rpc_id: int = 1
) -> dict:
    value = v1_task(task_id, parts, context_id=context_id)
    value["status"]["timestamp"] = when
    return jsonrpc_result({"task": value}, rpc_id)


def cite(**overrides) -> dict:
    return {"data": citation(**overrides), "mediaType": CITATIONS_MT}


SANTE = {
    "study": "Étude Santé 2026",
    "period": "Vague 2",
    "weight": "unweighted",
    "warnings": None,
    "base": {"name": "Adultes", "n": 1875},
    "source": {"table": "sante_panel", "column": "q7", "function": "extractDistribution"},
}


def build(write) -> list[str]:
    """Files (in ingest order) holding:
    t1  Versant W6 s14r5, claims /share /n, stored in two copies (versant/a.jsonl, versant/c.jsonl: the
        same task in other bytes, as a second client's log has it; the same bytes would be one copy)
    t2  claim /x resting on two citations: Étude Santé (non-ASCII) and Versant W5 s12r2
    t3  uncited claim /y
    t4  type-lost citation with a malicious study, base n 50, claim /z
    t5  invalid citation (base.n missing), claim /w
    t6  a study named <script>…, claim /v
    """
    return [
        write("versant/agent-card.json", card("Versant Insights")),
        write("versant/a.jsonl", [task("t1", [{"data": {"share": 0.42, "n": 1210}}, cite()])]),
        write("sante/agent-card.json", card("Agent Santé")),
        write(
            "sante/b.jsonl",
            [
                task(
                    "t2",
                    [
                        {"data": {"x": 5}},
                        cite(**SANTE),
                        cite(
                            period="W5 (March 2026)",
                            warnings=None,
                            source={"table": "versant_flat", "column": "s12r2", "function": "extractShare"},
                        ),
                    ],
                    when="2026-05-02T08:00:00Z",
                    context_id="ctx-2",
                )
            ],
        ),
        write(
            "versant/c.jsonl",
            [task("t1", [{"data": {"share": 0.42, "n": 1210}}, cite()], when="2026-04-20T10:00:00Z", rpc_id=2)],
        ),
        write("other/d.jsonl", [task("t3", [{"data": {"y": 1}}], when="2026-03-01T00:00:00Z", context_id="ctx-3")]),
        write(
            "other/e.jsonl",
            [
                task(
                    "t4",
                    [
                        {"data": {"z": 2.5}},
                        {"data": citation(study=MALICIOUS, base={"name": "Tiny", "n": 50}, weight=None)},
                    ],
                    when="2026-06-01T00:00:00Z",
                    context_id="ctx-4",
                )
            ],
        ),
        write(
            "other/f.jsonl",
            [
                task(
                    "t5",
                    [{"data": {"w": 7}}, cite(base={"name": "Nobody"})],
                    when="2026-06-02T00:00:00Z",
                    context_id="ctx-5",
                )
            ],
        ),
        write(
            "other/g.jsonl",
            [
                task(
                    "t6",
                    [{"data": {"v": 3}}, cite(study=SCRIPT_STUDY)],
                    when="2026-06-03T00:00:00Z",
                    context_id="ctx-6",
                )
            ],
        ),
    ]
