"""archiver show: each number with its citation directly beneath, as text and as one HTML page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from archiver.cli import main

from .lineage_data import MALICIOUS, SCRIPT_STUDY, build

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.fixture
def lineage(archive, write):
    archive.ingest(build(write), workers=1)
    return archive


def lines_under(text: str, number_line: str) -> list[str]:
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip() == number_line)
    following = []
    for line in lines[index + 1 :]:
        if not line.startswith("     "):
            break
        following.append(line.strip())
    return following


def test_show_cited(lineage):
    text = lineage.render("t1")
    for number in ("/share = 0.42", "/n = 1210"):
        assert lines_under(text, number) == [
            "↳ citation: Versant Mega Tracker · W6 (April 2026) · fielded 2026-04-02/2026-04-19",
            "base: Adults 18-74, aware of brand · n=4210 · weight main_weight",
            "source: extractFunnel(versant_flat, s14r5)",
            "⚠ WARNING: Base under 100 in the 65-74 cell",
        ]
    assert "stored in 2 copies" in text
    assert text.count("══ task t1") == 1


def test_show_claim_on_two_citations(lineage):
    under = lines_under(lineage.render("t2"), "/x = 5")
    assert under[0] == "↳ citation: Versant Mega Tracker · W5 (March 2026) · fielded 2026-04-02/2026-04-19"
    assert "↳ citation: Étude Santé 2026 · Vague 2 · fielded 2026-04-02/2026-04-19" in under
    assert "source: extractDistribution(sante_panel, q7)" in under


def test_show_uncited(lineage):
    assert lines_under(lineage.render("t3"), "/y = 1") == ["↳ UNCITED: no citation in any stored copy of this result"]


def test_show_invalid(lineage):
    under = lines_under(lineage.render("t5"), "/w = 7")
    assert under[0].startswith("↳ INVALID citation: Versant Mega Tracker")
    assert "INVALID: base.n is missing" in under


def test_show_type_lost(lineage):
    under = lines_under(lineage.render("t4"), "/z = 2.5")
    assert under[0] == f"↳ TYPE-LOST citation: {MALICIOUS} · W6 (April 2026) · fielded 2026-04-02/2026-04-19"
    assert under[1] == "base: Tiny · n=50"
    assert "TYPE-LOST: recognised by its fields; its media type was lost on the way" in under


def test_show_by_context_and_unknown(lineage, tmp_path):
    assert "══ task t2" in lineage.render("ctx-2")
    lineage.close()
    result = CliRunner().invoke(main, ["show", "nope", "--db", str(tmp_path / "archive.duckdb")])
    assert result.exit_code == 1
    assert "no task, message or context" in result.output
    result = CliRunner().invoke(main, ["show", "t1", "--db", str(tmp_path / "archive.duckdb")])
    assert result.exit_code == 0
    assert "/share = 0.42" in result.output


def test_html_escapes_every_string(lineage):
    page = lineage.render("t6", "html")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower()


HARNESS = """<script>
const out = [];
for (const claim of document.querySelectorAll('.claim')) {
  const value = claim.querySelector('.value').getBoundingClientRect();
  for (const cite of claim.querySelectorAll('.citation, .uncited')) {
    const box = cite.getBoundingClientRect();
    out.push([claim.querySelector('.pointer').textContent, Math.round(box.top - value.bottom),
              Math.round(box.left - value.left), box.width > 0 && box.height > 0, cite.innerText.split('\\n')[0]]);
  }
}
const report = document.createElement('pre');
report.id = 'report';
report.textContent = JSON.stringify({claims: out, scripts: document.scripts.length,
                                     text: document.body.innerText});
document.body.appendChild(report);
</script>"""


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`)")
def test_html_in_headless_chromium(lineage, tmp_path):
    import json

    page = tmp_path / "page.html"
    pages = {ident: lineage.render(ident, "html") for ident in ("t1", "t3", "t4", "t5", "t6")}
    html = pages["t6"].replace(
        "</body>",
        "".join(re.search(r"<body>(.*)</body>", p, re.DOTALL).group(1) for k, p in pages.items() if k != "t6")
        + "</body>",
    )
    page.write_text(html.replace("</body>", HARNESS + "</body>"), encoding="utf-8")
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1200,4000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    report = json.loads(
        re.search(r'<pre id="report">(.*?)</pre>', dom, re.DOTALL)
        .group(1)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&amp;", "&")
    )
    claims = report["claims"]
    assert {c[0] for c in claims} == {"/share", "/n", "/y", "/z", "/w", "/v"}
    for pointer, gap, indent, visible, _head in claims:
        assert visible, pointer
        assert 0 <= gap <= 12, (pointer, gap)  # the citation starts right under its number
        assert 0 <= indent <= 40, (pointer, indent)
    heads = {c[0]: c[4] for c in claims}
    assert heads["/y"].startswith("UNCITED")
    assert heads["/w"].startswith("INVALID citation")
    assert heads["/z"].startswith("TYPE-LOST citation")
    assert heads["/v"] == f"citation: {SCRIPT_STUDY} · W6 (April 2026) · fielded 2026-04-02/2026-04-19"
    assert report["scripts"] == 1  # only the test harness: the study name did not become a script
    assert SCRIPT_STUDY in report["text"]
    assert "⚠ WARNING: Base under 100 in the 65-74 cell" in report["text"]
