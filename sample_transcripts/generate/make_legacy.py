"""Hand-written v0.1-dialect sample (no SDK emits v0.1 any more).

Writes legacy-funnel/v01-tasks-send.json: a JSON array holding one
`tasks/send` request and its response, in the v0.1 shapes (`"type"` part
discriminator, `sessionId`, `final`-less task result).  Runs with any Python 3.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CIT_MT, OUT, Fragment, cit_summary, citation, copy_entry

L = "Legacy Funnel Agent"
CIT_V01 = citation(
    "Northwind Retail Pulse",
    "2025-Q2",
    "Loyalty-card shoppers",
    530,
    "nw_pulse_long",
    "basket_size",
    "extractMean",
    weight="unweighted",
)
Q_V01 = {"mean_basket_eur": 39.9, "median_basket_eur": 33.0, "total": 530}


def main():
    fr = Fragment("legacy")
    rel = "legacy-funnel/v01-tasks-send.json"
    doc = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tasks/send",
            "params": {
                "id": "task-fnl-v01-basket",
                "sessionId": "sess-fnl-v01",
                "message": {"role": "user", "parts": [{"type": "text", "text": "Mean basket size, Q2 2025?"}]},
                "acceptedOutputModes": ["text/plain", "application/json", CIT_MT],
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "id": "task-fnl-v01-basket",
                "sessionId": "sess-fnl-v01",
                "status": {"state": "completed", "timestamp": "2025-07-02T10:15:00.000000"},
                "artifacts": [
                    {
                        "name": "basket",
                        "index": 0,
                        "parts": [
                            {"type": "text", "text": "Mean basket €39.90 (Q2 2025)."},
                            {"type": "data", "data": Q_V01},
                            {"type": "data", "data": CIT_V01, "metadata": {"mediaType": CIT_MT}},
                        ],
                        "lastChunk": True,
                    }
                ],
                "metadata": {},
            },
        },
    ]
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    fr.file(
        rel,
        "json",
        ["0.1-jsonrpc"],
        "hand-written",
        1,
        'Hand-written v0.1 dialect: a JSON array [tasks/send request, response]; "type" '
        "part discriminator, sessionId, citation media type in Part metadata.",
    )
    fr.add_copy(
        "task:task-fnl-v01-basket",
        L,
        copy_entry(rel, "completed", True, [cit_summary(CIT_V01)], [Q_V01], 1),
        task_id="task-fnl-v01-basket",
        context_id="sess-fnl-v01",
    )
    fr.write()


if __name__ == "__main__":
    main()
