"""An archive for the `archiver serve` tests: the lineage archive, the samples, and a task whose every
citation field (and agent name, and data) is an XSS payload."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .lineage_data import build, card, cite, task
from .servers import free_port

ROOT = Path(__file__).resolve().parent.parent
XSS = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
"""What a hostile agent writes into every field: it must stay text on every page."""


SCREENSHOTS = {
    "overview": "/",
    "search": "/search?column=s14r5",
    "citations": "/search?kind=citations&study=Kestrel+Commuter+Panel",
    "result": "/result/task-vrs-rpc-funnel",
    "column": "/column/s14r5",
    "column-sources": "/column/visits_pw",
    "impact": "/search?kind=impact&study=Versant+Mega+Tracker",
    "study": "/study/Kestrel%20Commuter%20Panel",
    "period": "/period/W6%20(April%202026)",
    "table": "/table/demo_flat",
    "agent": "/agent/Kestrel%20Mobility%20Agent",
    "audit": "/audit",
    "verify": "/verify",
}
"""Every page of `archiver serve` on the samples, by the name of its screenshot (docs/serve-NAME.png, made by
tests/test_serve_screenshots.py; docs/scale/NAME.png on a 250k-claim archive by benchmarks/scale_screenshots.py)."""


def xss_files(write) -> list[str]:
    hostile = cite(
        study=f"Study {XSS}",
        period=f"W9 {XSS}",
        fielded=f"2026-01-01/{XSS}",
        base={"name": f"Base {XSS}", "n": 12},
        weight=f"w {XSS}",
        source={"table": f"t{XSS}", "column": f"c{XSS}", "function": f"f{XSS}"},
        warnings=[f"warn {XSS}"],
    )
    return [
        write("hostile/agent-card.json", card(f"Agent {XSS}")),
        write(
            "hostile/x.jsonl",
            [
                task(
                    "t-xss",
                    [{"data": {f"k{XSS}": 7, "rows": [{"label": XSS, "share": 0.5}]}}, hostile],
                    context_id="ctx-x",
                )
            ],
        ),
    ]


def serve_archive(archive, write, samples: bool = True) -> list[str]:
    """Ingest the lineage files, the hostile task and (when `samples`) the sample transcripts."""
    paths = build(write) + xss_files(write)
    if samples:
        paths.append(str(ROOT / "sample_transcripts"))
    archive.ingest(paths, workers=1)
    return paths


@contextmanager
def serving(db: str) -> Iterator[str]:
    """`archiver serve`'s application on `db` in a real uvicorn server on a free loopback port: its URL."""
    import uvicorn

    from archiver.serve import create_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
