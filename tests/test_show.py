"""archiver show: tables of numbers with one citation block per Part beside them, as text and as one HTML page."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from archiver.cli import main
from archiver.render.paths import display_path

from .lineage_data import MALICIOUS, SCRIPT_STUDY, build, card, cite, task

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.fixture
def lineage(archive, write):
    archive.ingest(build(write), workers=1)
    return archive


def lines_under(text: str, head: str) -> list[str]:
    """The lines of the block that starts with `head` (a citation's first line, without its arrow)."""
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip() in (head, f"↳ {head}"))
    following = []
    for line in lines[index + 1 :]:
        if not line.startswith("     "):
            break
        following.append(line.strip())
    return following


VERSANT_W6 = "citation: Versant Mega Tracker · W6 (April 2026)"


@pytest.mark.slow
def test_show_cited(lineage):
    text = lineage.render("t1")
    assert "   share  0.42\n   n      1210\n" in text
    assert lines_under(text, VERSANT_W6) == [
        "covers 2 numbers: share, n",
        "fielded 2026-04-02/2026-04-19",
        "base: Adults 18-74, aware of brand · n=4210 · weight main_weight",
        "source: extractFunnel(versant_flat, s14r5)",
        "⚠ WARNING: Base under 100 in the 65-74 cell",
    ]
    assert "stored in 2 copies" in text
    assert text.count("══ task t1") == 1


@pytest.mark.slow
def test_show_claim_on_two_citations(lineage):
    text = lineage.render("t2")
    assert "   x  5\n" in text
    assert lines_under(text, "citation: Versant Mega Tracker · W5 (March 2026)")[0] == ("covers 1 number: x")
    under = lines_under(text, "citation: Étude Santé 2026 · Vague 2")
    assert "source: extractDistribution(sante_panel, q7)" in under


@pytest.mark.slow
def test_show_uncited(lineage):
    assert lines_under(lineage.render("t3"), "UNCITED: no citation in any stored copy of this result") == [
        "1 number: y"
    ]


@pytest.mark.slow
def test_show_invalid(lineage):
    text = lineage.render("t5")
    under = lines_under(text, "INVALID citation: Versant Mega Tracker · W6 (April 2026)")
    assert "INVALID: base.n is missing" in under


@pytest.mark.slow
def test_show_type_lost(lineage):
    under = lines_under(lineage.render("t4"), f"TYPE-LOST citation: {MALICIOUS} · W6 (April 2026)")
    assert under[:3] == ["covers 1 number: z", "fielded 2026-04-02/2026-04-19", "base: Tiny · n=50"]
    assert "TYPE-LOST: recognised by its fields; its media type was lost on the way" in under


@pytest.mark.slow
def test_show_by_context_and_unknown(lineage, tmp_path):
    assert "══ task t2" in lineage.render("ctx-2")
    lineage.close()
    result = CliRunner().invoke(main, ["show", "nope", "--db", str(tmp_path / "archive.duckdb")])
    assert result.exit_code == 1
    assert "no task, message or context" in result.output
    result = CliRunner().invoke(main, ["show", "t1", "--db", str(tmp_path / "archive.duckdb")])
    assert result.exit_code == 0
    assert "   share  0.42" in result.output


@pytest.mark.slow
def test_html_escapes_every_string(lineage):
    page = lineage.render("t6", "html")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower()


# Issue 15, item 7: what a reader saw, and what they see now.

SEGMENTS = {
    "wave": "W6",
    "segments": [
        {"name": "18-34", "share": 0.42, "n": 1210},
        {"name": "35-54", "share": 0.37, "n": 1655},
        {"name": "55-74", "share": 0.21, "n": 1345.0},
    ],
    "total": 4210,
}


@pytest.fixture
def segments(archive, write):
    """t7: a table of segments with its citation (versant/full.jsonl); a second copy without the citation
    Part (versant/list.jsonl, as a list call that leaves artifacts out would store it)."""
    files = [
        write("versant/agent-card.json", card("Versant Insights")),
        write("versant/full.jsonl", [task("t7", [{"data": SEGMENTS}, cite()], context_id="ctx-7")]),
        write("versant/list.jsonl", [task("t7", [{"data": SEGMENTS}], context_id="ctx-7", rpc_id=2)]),
    ]
    archive.ingest(files, workers=1)
    return archive, files


@pytest.mark.slow
def test_one_citation_block_per_part_saying_which_cells_it_covers(segments):
    text = segments[0].render("t7")
    assert text.count("Versant Mega Tracker") == 2  # the citation Part itself, and one block beside the table
    assert lines_under(text, VERSANT_W6)[0] == "covers 7 numbers: share, n in segments (3 rows); total"


@pytest.mark.slow
def test_an_array_of_objects_is_a_table_with_numbers_as_written_and_aligned(segments):
    text = segments[0].render("t7")
    assert "/segments" not in text
    table = text[text.index("   segments:") :].splitlines()[:6]
    assert table == [
        "   segments:",
        "   name   share       n",
        "   18-34   0.42    1210",
        "   35-54   0.37    1655",
        "   55-74   0.21  1345.0",  # as the agent wrote it, right-aligned with its column
        "   total  4210",
    ]


def test_a_rerun_difference_is_shown_to_the_agents_precision_not_as_a_float():
    from archiver.query.transcript import CitationView, PartView, ResultView
    from archiver.render.text import render_text

    citation = CitationView(inferred=False, study="S", period="W1", base_name="All", base_n=120, citation_hash="c")
    citation.verdict, citation.differences = "differs", {"/segments/0/share": 0.41510322261717025}
    part = PartView("data", "agent", "artifact", "a", "funnel", 0, None, data=SEGMENTS)
    result = ResultView("task:t", "task", "t", "ctx", None, "completed", None, None, ["a.jsonl"], [part], [citation])
    text = render_text([result])
    assert "  share of 18-34: the agent wrote 0.42, the data layer re-derives 0.415\n" in text
    assert "0.41510322261717025" not in text


@pytest.mark.slow
def test_citation_is_neutral_when_valid_and_marked_when_not(lineage):
    valid = lineage.render("t1", "html")
    assert f'<div class="head">{VERSANT_W6}</div>' in valid
    assert 'class="mark"' not in valid
    assert 'class="head-bad"' not in valid
    invalid = lineage.render("t5", "html")
    assert '<div class="head-bad">INVALID citation: Versant Mega Tracker' in invalid
    assert '<div class="bad">INVALID: base.n is missing</div>' in invalid


@pytest.mark.slow
def test_a_copy_that_lacks_a_part_says_so_and_copy_shows_it(segments):
    archive, files = segments
    full, listed = files[1], files[2]
    text = archive.render("t7")
    assert f'⚠ copy in {display_path(listed)} lacks the citation Part (Part 1 of artifact "answer")' in text
    assert f"{display_path(full)} (shown)" in text
    assert VERSANT_W6 in text
    one = archive.render("t7", copy=listed)
    assert f"{display_path(listed)} (shown)" in one
    assert VERSANT_W6 not in one
    assert lines_under(one, "UNCITED: no citation in this copy of the result") == [
        "7 numbers: share, n in segments (3 rows); total"
    ]
    archive.close()
    db = str(Path(full).parents[2] / "archive.duckdb")
    result = CliRunner().invoke(main, ["show", "t7", "--copy", listed, "--db", db])
    assert result.exit_code == 0
    assert result.output == one
    result = CliRunner().invoke(main, ["show", "t7", "--copy", "elsewhere.jsonl", "--db", db])
    assert result.exit_code == 1
    assert result.output == "Error: t7: no stored copy in elsewhere.jsonl\n"


HARNESS = """<script>
const box = (e) => e.getBoundingClientRect();
const beside = [];
for (const data of document.querySelectorAll('.data')) {
  const cells = box(data.querySelector('.cells'));
  for (const cite of data.querySelectorAll('.citation')) {
    const b = box(cite);
    beside.push([cite.innerText.split('\\n')[0], Math.round(b.left - cells.right), Math.round(b.top - cells.top),
                 b.width > 0 && b.height > 0]);
  }
}
const heads = [...document.querySelectorAll('.citation > div:first-child')].map(
  (e) => [e.textContent, getComputedStyle(e).color]);
const aligned = [...document.querySelectorAll('td.num')].map((e) => getComputedStyle(e).textAlign);
const report = document.createElement('pre');
report.id = 'report';
report.textContent = JSON.stringify({beside, heads, aligned, scripts: document.scripts.length,
                                     text: document.body.innerText});
document.body.appendChild(report);
</script>"""

RED = "rgb(197, 48, 48)"


def chromium(page: Path, profile: Path, *args: str) -> str:
    """Headless Debian Chromium over one local page; its stdout."""
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`)")


@pytest.mark.browser
@browser
def test_html_in_headless_chromium(lineage, segments, tmp_path):
    import json

    page = tmp_path / "page.html"
    archive = segments[0]
    pages = {ident: archive.render(ident, "html") for ident in ("t1", "t3", "t4", "t5", "t6", "t7")}
    html = pages["t6"].replace(
        "</body>",
        "".join(re.search(r"<body>(.*)</body>", p, re.DOTALL).group(1) for k, p in pages.items() if k != "t6")
        + "</body>",
    )
    page.write_text(html.replace("</body>", HARNESS + "</body>"), encoding="utf-8")
    dom = chromium(page, tmp_path / "profile", "--window-size=1200,4000", "--dump-dom")
    report = json.loads(
        re.search(r'<pre id="report">(.*?)</pre>', dom, re.DOTALL)
        .group(1)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&amp;", "&")
    )
    assert len(report["beside"]) == 6  # one block for each of t1, t3 (uncited), t4, t5, t6 and t7 (a table)
    for head, gap, top, visible in report["beside"]:
        assert visible, head
        assert 0 <= gap <= 40, (head, gap)  # the block stands beside the table, not under each number
        assert abs(top) <= 12, (head, top)
    colours = {text.split(":")[0]: colour for text, colour in report["heads"]}
    assert colours["citation"] != RED  # "citation" is neutral when the citation is valid
    assert colours["INVALID citation"] == RED
    assert colours["TYPE-LOST citation"] == RED
    assert colours["UNCITED"] == RED
    assert set(report["aligned"]) == {"right"}
    assert report["scripts"] == 1  # only the test harness: the study name did not become a script
    assert SCRIPT_STUDY in report["text"]
    assert "⚠ WARNING: Base under 100 in the 65-74 cell" in report["text"]
    assert 'lacks the citation Part (Part 1 of artifact "answer")' in report["text"]


SAMPLES = Path(__file__).parent.parent / "sample_transcripts"
SCREENSHOT = Path(__file__).parent.parent / "docs" / "show.png"
ARTIFACTS = Path(__file__).parent.parent / "build" / "test-artifacts"

BUSIEST = """
    SELECT r.task_id FROM results r
    JOIN (SELECT result_key, count(DISTINCT (content_hash, pointer)) AS claims FROM claims GROUP BY ALL) c
      USING (result_key)
    JOIN (SELECT result_key, count(DISTINCT content_hash) AS parts FROM parts GROUP BY ALL) p USING (result_key)
    WHERE r.task_id IS NOT NULL
    ORDER BY c.claims DESC, p.parts DESC, r.task_id LIMIT 1
"""


@pytest.mark.browser
@browser
def test_screenshot_of_the_busiest_sample_task(archive, tmp_path):
    """The HTML `show` of the sample task with the most claims (then Parts), as Chromium draws it: kept as
    build/test-artifacts/show.png; with ARCHIVER_UPDATE_SNAPSHOTS=1, also written to docs/show.png."""
    archive.ingest([str(SAMPLES)], workers=1)
    (task_id,) = archive.con.execute(BUSIEST).fetchone()
    assert task_id == "task-vrs-rpc-funnel"
    page = tmp_path / "show.html"
    page.write_text(archive.render(task_id, "html"), encoding="utf-8")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "show.png"
    shot.unlink(missing_ok=True)
    chromium(page, tmp_path / "profile", "--window-size=1100,700", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("ARCHIVER_UPDATE_SNAPSHOTS"):
        shutil.copyfile(shot, SCREENSHOT)
    assert SCREENSHOT.exists(), "docs/show.png: run with ARCHIVER_UPDATE_SNAPSHOTS=1 to write it"


@pytest.mark.slow
def test_show_as_json_is_the_web_views_twin(lineage):
    """`show --format json` (issue 28, item 6) prints what `/result/ID.json` answers, byte for byte."""
    from starlette.testclient import TestClient

    from archiver.serve import create_app

    path = lineage.path
    lineage.close()
    printed = CliRunner().invoke(main, ["show", "t1", "--db", path, "--format", "json"])
    assert printed.exit_code == 0, printed.output
    with TestClient(create_app(path), base_url="http://localhost") as client:
        twin = client.get("/result/t1.json")
    assert twin.status_code == 200
    assert printed.output == twin.text + "\n"
    document = json.loads(printed.output)
    assert document["id"] == "t1"
    assert [r["task_id"] for r in document["results"]] == ["t1"]
    assert document["results"][0]["citations"][0]["study"] == "Versant Mega Tracker"


def test_show_as_json_holds_a_part_nested_as_deep_as_the_archive_stores(tmp_path, write):
    """A Part nested 990 levels deep (the archive stores up to 1024) is printed by `show --format json` and answered
    by `/result/ID.json` alike: the views' dicts were copied recursively (`asdict`, Python's recursion limit) and
    orjson writes at most 254 levels; both ended in a traceback."""
    from starlette.testclient import TestClient

    from archiver.serve import create_app

    deep = "0"
    for _ in range(990):
        deep = f"[{deep}]"
    record = '{"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t-deep", "contextId": "c", "status": '
    record += '{"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"artifactId": "a", "parts": [{"data": {"x": '
    record += deep + "}}]}]}}}\n"
    db = str(tmp_path / "deep.duckdb")
    ingested = CliRunner().invoke(main, ["ingest", write("deep.jsonl", record), "--db", db])
    assert ingested.exit_code == 0, ingested.output
    printed = CliRunner().invoke(main, ["show", "t-deep", "--db", db, "--format", "json"])
    assert printed.exit_code == 0, printed.output
    assert '"data":{"x":' + deep + "}" in printed.output
    with TestClient(create_app(db), base_url="http://localhost") as client:
        twin = client.get("/result/t-deep.json")
    assert twin.status_code == 200
    assert printed.output == twin.text + "\n"


WIDE_ROWS = [
    {"segment": "Adults 18-34, urban, weekly shoppers", "region": "North-West coastal", "share": 0.42, "n": 1210},
    {"segment": "Adults 35-54, suburban", "region": "South-East inland", "share": 0.37, "n": 1655},
]


@pytest.mark.slow
def test_show_fits_a_table_to_the_terminal_by_the_one_rule(archive, write):
    """Issue 41: `show`'s tables went through no fitting rule: at 60 columns a wide table's lines wrapped
    on the screen mid-cell. They fit as every table does: the widest text cut, numbers whole; a table that
    cannot fit is shown a row at a time; the other lines wrap between words."""
    archive.ingest([write("wide.jsonl", [task("t-wide", [{"data": {"segments": WIDE_ROWS}}, cite()])])], workers=1)
    whole = archive.render("t-wide")
    assert "   Adults 18-34, urban, weekly shoppers  North-West coastal   0.42  1210" in whole
    for width in (60, 72):
        text = archive.render("t-wide", width=width)
        assert [line for line in text.splitlines() if len(line) > width] == []
        assert "base: Adults 18-74, aware of brand · n=4210 · weight main_weight" in " ".join(text.split())
    assert "   Adults 18-34, urban, we…  North-West coastal   0.42  1210" in archive.render("t-wide", width=60)
    assert "   Adults 18-…  North-West…   0.42  1210" in archive.render("t-wide", width=40)
    narrow = archive.render("t-wide", width=34).splitlines()
    assert [line for line in narrow if len(line) > 34] == []
    assert "   segment  Adults 18-34, urban," in narrow
    assert "   share    0.42" in narrow
    assert "   n        1210" in narrow


def test_show_holds_duckdb_to_the_listing_memory(lineage, tmp_path, monkeypatch):
    """`archiver show` reads a task's stored copies with DuckDB's buffer pool held as `archiver query` holds it
    (at 100M claims a task's page peaked at 1.8 GiB unbounded, 1.2 GiB held)."""
    import archiver.query.limits
    from archiver.archive import Archive

    lineage.close()
    monkeypatch.setattr(archiver.query.limits, "LISTING_MEMORY", 96 * 2**20)
    seen, render = [], Archive.render

    def noted(self, *args, **kwargs):
        seen.append(self.con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
        return render(self, *args, **kwargs)

    monkeypatch.setattr(Archive, "render", noted)
    result = CliRunner().invoke(main, ["show", "t1", "--db", str(tmp_path / "archive.duckdb")])
    assert result.exit_code == 0, result.output
    assert "   share  0.42" in result.output
    assert seen == ["96.0 MiB"]
