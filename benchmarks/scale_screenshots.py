"""Screenshots of every page of `archiver serve` on a 250k-claim archive, at 1,280 and 1,920 px, as
docs/scale/NAME.png and docs/scale/NAME-1920.png (linked from docs/serve.md), beside the samples' own
(tests/test_serve_screenshots.py). Slow (minutes), so not part of the test suite:

    nice -n 19 python -m benchmarks.scale_screenshots --work /tmp/scale

The archive is the SDK-shaped corpus (`sdk_shaped`: 810 copies of the samples' text transcripts, 250,290
claims in stored copies) ingested and verified against the samples' data layer, made once in `--work`
and reused. Each page is timed (its first answer, then again from what the server keeps) and checked: it
answers 200, fits the window's width, and shows no count of four or more digits without its thousands
separator.
"""

from __future__ import annotations

import argparse
import http.client
import re
import shutil
import subprocess
import time
from pathlib import Path

from tests.serve_data import SCREENSHOTS

from . import sdk_shaped
from .run import ARCHIVER, ROOT
from .serve_load import free_port, serve_process

COPIES = 810
LAYER = ROOT / "sample_transcripts" / "data-layer" / "archiver-data-layer.toml"
SAMPLES = SCREENSHOTS.items()
PAGES = {
    **{
        name: url.replace("/result/task-vrs-rpc-funnel", "/result/task-vrs-rpc-funnel-c0")
        for name, url in SCREENSHOTS.items()
    },
    "search-sources": "/search?column=visits_pw",
}
"""Every page, by the name of its screenshot: the samples' (tests/serve_data.py), their result under the first
copy's ids, and a search of a column two studies cite."""
WIDTHS = {1280: "", 1920: "-1920"}
UNGROUPED = re.compile(r"(?<![\w.:/#-])\d{4,}(?![\w.:/-])")
"""A whole number of four or more digits standing alone in a page's text: a count without its separator
(a year stands inside a date, an id inside its name)."""


def archive_for(work: Path, copies: int = COPIES) -> Path:
    """The archive of `copies` copies of the samples, ingested and verified once in `work`."""
    db = work / f"sdk-{copies}.duckdb"
    if db.exists():
        return db
    corpus = work / f"sdk-{copies}"
    if not (corpus / "truth.json").exists():
        shutil.rmtree(corpus, ignore_errors=True)
        sdk_shaped.generate(corpus, copies)
    partial = db.with_suffix(".partial.duckdb")
    partial.unlink(missing_ok=True)
    subprocess.run([*ARCHIVER, "ingest", str(corpus), "--db", str(partial)], check=True, cwd=ROOT)
    subprocess.run(
        [*ARCHIVER, "verify", "--data-layer", str(LAYER), "--db", str(partial)],
        check=False,  # exits 1 when a verdict differs: the archive holds them all the same
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    partial.rename(db)
    return db


def started(db: Path) -> tuple[subprocess.Popen, int, float]:
    """`archiver serve` on `db` in a process of its own, once its first answer (the overview's snapshot)
    is in: the process, its port, and the seconds that first answer took."""
    port = free_port()
    server = serve_process(db, port)
    deadline = time.monotonic() + 120
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            begun = time.perf_counter()
            connection.request("GET", "/index.json")
            connection.getresponse().read()
            return server, port, time.perf_counter() - begun
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("archiver serve did not start: " + server.stderr.read().decode()) from None
            time.sleep(0.2)


def shoot(port: int, out: Path) -> list[str]:
    """Every page at every width into `out`; what a reader would trip on, one line each; prints timings."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for width, suffix in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": 900}, base_url=f"http://127.0.0.1:{port}")
            page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
            for name, url in PAGES.items():
                begun = time.perf_counter()
                answer = page.goto(url, timeout=300_000)
                seconds = time.perf_counter() - begun
                print(f"{width} px  {name:16} {seconds:6.2f} s  {url}", flush=True)
                if answer.status != 200:
                    problems.append(f"{url}: {answer.status}")
                if page.evaluate("document.documentElement.scrollWidth") > width:
                    problems.append(f"{url} at {width} px: wider than the window")
                text = page.inner_text("main")
                for number in sorted(set(UNGROUPED.findall(text))):
                    if 1900 <= int(number) <= 2100:  # a year said alone ("2026")
                        continue
                    problems.append(f"{url}: {number} without its thousands separator")
                page.screenshot(path=str(out / f"{name}{suffix}.png"), full_page=True)
            page.close()
        browser.close()
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("benchmarks/corpus"), help="where the archive is made")
    parser.add_argument("--copies", type=int, default=COPIES)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "scale")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    db = archive_for(args.work, args.copies)
    server, port, first = started(db)
    print(f"serve's first answer (the overview's snapshot): {first:,.1f} s", flush=True)
    try:
        problems = shoot(port, args.out)
    finally:
        server.terminate()
        server.wait(30)
    print("\n".join(problems) or "every page answered, fits its window and groups its counts")


if __name__ == "__main__":
    main()
