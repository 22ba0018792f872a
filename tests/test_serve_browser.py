"""archiver serve in Debian's Chromium (Playwright for Python with the system browser; nothing is
downloaded): a real uvicorn server on a free loopback port, every page reached from the overview,
the search form filled in, links followed, a CSV downloaded, hostile fields inert. Screenshots of each
page go to $ARCHIVER_ARTIFACTS (default: the test's temporary folder)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from archiver.archive import Archive

from .serve_data import ROOT, XSS, serve_archive, serving

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright ('.[test]')")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

LAYER = ROOT / "sample_transcripts" / "data-layer" / "archiver-data-layer.toml"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("served")

    def write(name, content):
        path = folder / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = content if isinstance(content, list) else None
        text = b"".join(json.dumps(i).encode() + b"\n" for i in lines) if lines else json.dumps(content).encode()
        path.write_bytes(text)
        return str(path)

    db = str(folder / "archive.duckdb")
    with Archive.open(db) as archive:
        serve_archive(archive, write)
        archive.verify(str(LAYER))
    with serving(db) as url:
        yield url


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("ARCHIVER_ARTIFACTS") or tmp_path_factory.mktemp("artifacts")) / "serve"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True, base_url=base_url)
    opened = context.new_page()
    dialogs, errors = [], []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    opened.dialogs, opened.errors = dialogs, errors
    yield opened
    context.close()


def shot(page, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"serve-{name}.png"), full_page=True)


def test_every_page_is_within_two_clicks_of_the_overview(page, artifacts):
    page.goto("/")
    assert page.locator("h1").inner_text() == "Overview"
    shot(page, artifacts, "overview")
    reached = {}
    for nav in ("Search", "Audit", "Verify"):
        page.goto("/")
        page.locator("nav.top").get_by_role("link", name=nav, exact=True).click()
        reached[nav] = page.locator("h1").inner_text()
    assert reached == {"Search": "Search claims", "Audit": "Audit findings", "Verify": "Verdicts"}
    page.goto("/")
    page.locator("a.chip", has_text="Versant Insights Agent").click()  # overview -> agent
    assert page.locator("h1").inner_text() == "agent Versant Insights Agent"
    shot(page, artifacts, "agent")
    page.goto("/")
    page.locator("section.subjects a.chip[href='/column/s14r5']").click()  # overview -> column
    assert page.locator("h1").inner_text() == "column s14r5"
    page.goto("/")
    page.locator("section.subjects a.chip[href^='/study/']").first.click()  # overview -> study
    page.locator("table.rows a[href^='/period/']").first.click()  # -> a period
    assert page.locator("h1").inner_text().startswith("period ")
    page.goto("/")
    page.locator("section.subjects a.chip[href^='/table/']").first.click()  # overview -> table
    assert page.locator("h1").inner_text().startswith("table ")
    page.goto("/")
    page.locator("a[href^='/audit?rule=']").first.click()  # overview -> findings of a rule
    page.locator("table.rows a[href^='/result/']").first.click()  # -> the transcript
    assert page.locator("section.result").count() >= 1
    assert not page.errors
    assert not page.dialogs


def test_fill_the_search_form_and_share_its_address(page, artifacts):
    page.goto("/search")
    page.fill("input[name=column]", "s14r5")
    page.select_option("select[name=valid]", "yes")
    page.get_by_role("button", name="Search").click()
    page.wait_for_load_state()
    assert "column=s14r5" in page.url
    assert "valid=yes" in page.url
    rows = page.locator("table.rows tbody tr")
    assert rows.count() >= 1
    column = page.locator("table.rows thead th").all_inner_texts().index("source") + 1
    sources = page.locator(f"table.rows tbody td:nth-child({column})").all_inner_texts()
    assert {source.rsplit(", ", 1)[1] for source in sources} == {"s14r5)"}
    shot(page, artifacts, "search")
    again = page.context.new_page()
    again.goto(page.url)  # the address is the query
    assert again.locator("table.rows tbody tr").count() == rows.count()
    assert again.locator("form.filters input[name=column]").input_value() == "s14r5"
    again.close()


def test_download_a_csv(page):
    page.goto("/search?column=s14r5")
    with page.expect_download() as info:
        page.get_by_role("link", name="csv", exact=True).click()
    download = info.value
    assert download.suggested_filename == "claims.csv"
    text = Path(download.path()).read_text()
    assert text.splitlines()[0].startswith("value,unit,stated,pointer,cell,part_index")
    assert len(text.splitlines()) == 1 + len(page.locator("table.rows tbody tr").all())


def test_from_a_finding_to_its_part_in_the_transcript(page, artifacts):
    page.goto("/audit?rule=small-base")
    shot(page, artifacts, "audit")
    link = page.locator("table.rows a[href*='#part-']").first
    target = link.get_attribute("href")
    link.click()
    page.wait_for_load_state()
    assert page.url.endswith(target)
    anchor = target.split("#", 1)[1]
    assert page.locator(f"[id='{anchor}']").count() >= 1
    shot(page, artifacts, "result")


def test_from_a_column_to_its_chart(page, artifacts):
    page.goto("/result/task-vd-aware-w1")
    page.locator("nav.subjects a", has_text="column: aware_b1").click()
    assert page.locator("h1").inner_text() == "column aware_b1"
    panels = page.locator("figure.chart")
    assert [panels.nth(i).get_attribute("data-unit") for i in range(panels.count())] == ["share", "count", "base"]
    shares = panels.nth(0).locator("svg")
    assert shares.locator("circle.point").count() == 9  # three cells, three periods
    assert shares.bounding_box()["height"] > 100
    shot(page, artifacts, "column")
    shares.locator("a").first.click()  # a period's point -> its claims
    assert "column=aware_b1" in page.url
    assert "period=" in page.url


def test_verdicts_page(page, artifacts):
    page.goto("/verify")
    assert page.locator("tr.differs").count() == 1
    shot(page, artifacts, "verify")


def test_hostile_citation_fields_stay_inert(page):
    from urllib.parse import quote

    urls = [
        "/result/t-xss",
        "/search?task=t-xss",
        "/search?kind=citations&task=t-xss",
        "/study/" + quote(f"Study {XSS}", safe=""),
        "/column/" + quote(f"c{XSS}", safe=""),
        "/agent/" + quote(f"Agent {XSS}", safe=""),
        "/audit",
        "/",
    ]
    for url in urls:
        page.goto(url)
        assert page.locator("script").count() == 0, url
        assert page.locator("img").count() == 0, url
    page.goto("/result/t-xss")
    shown = page.locator("section.result").inner_text()
    for field in ("Study ", "W9 ", "Base ", "warn ", "w "):
        assert field + XSS in shown
    assert f"c{XSS}" in shown
    assert f"f{XSS}" in shown
    assert not page.dialogs
    assert not page.errors


NARROWER_THAN_A_WORD = """() => {
    const canvas = document.createElement("canvas").getContext("2d");
    const out = [];
    for (const cell of document.querySelectorAll("table.rows td, table.rows th")) {
        const style = getComputedStyle(cell);
        const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        for (const word of cell.innerText.split(/\\s+/)) {
            const holder = cell.querySelector("a, span") || cell;
            canvas.font = getComputedStyle(holder).font;
            const width = canvas.measureText(word).width;
            if (word && width > inner + 1) out.push(`${word} (${width.toFixed(0)} px) in ${inner.toFixed(0)} px`);
        }
    }
    return out;
}"""

LISTS = [
    "/search?study=*",
    "/search?study=*&size=20&_col="
    + "&_col=".join(
        (
            "value",
            "pointer",
            "task_id",
            "source_path",
            "base_name",
            "warnings",
            "problems",
            "citation_hash",
            "verdict_reason",
        )
    ),
    "/search?kind=citations&study=*",
    "/search?kind=impact&study=*",
    "/audit",
    "/verify",
    "/column/s14r5",
    "/column/visits_pw",
    "/study/Kestrel%20Commuter%20Panel",
]


@pytest.mark.parametrize("width", [1280, 1920])
def test_no_cell_is_narrower_than_its_longest_word(browser, base_url, width):
    """Values wrapped one character a line ("1,210" read downward, "erro r"); now a cell is at least as
    wide as its longest word, and a list wider than the window scrolls sideways in its own box."""
    context = browser.new_context(viewport={"width": width, "height": 900}, base_url=base_url)
    page = context.new_page()
    for url in LISTS:
        page.goto(url)
        assert page.locator("table.rows").count() >= 1, url
        assert page.evaluate(NARROWER_THAN_A_WORD) == [], url
        assert page.evaluate("document.documentElement.scrollWidth") <= width, url  # the page never scrolls sideways
    context.close()


def test_a_wide_list_scrolls_in_its_box_under_a_header_that_stays(page):
    page.set_viewport_size({"width": 1280, "height": 700})
    page.goto(
        "/search?study=*&size=100&_col="
        + "&_col=".join(
            (
                "value",
                "pointer",
                "task_id",
                "source_path",
                "timestamp",
                "base_name",
                "warnings",
                "problems",
                "citation_hash",
                "verdict_reason",
                "study",
                "period",
            )
        )
    )
    box = page.locator("div.scroll").first
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")  # wider than the window: it scrolls sideways
    box.evaluate("b => { b.scrollTop = 600; }")
    head, top = page.locator("table.rows thead th").first.bounding_box(), box.bounding_box()
    assert abs(head["y"] - top["y"]) <= 2  # the header stays at the top of the box
    title = page.locator("table.rows td span[title]").first
    assert title.get_attribute("title").startswith("/")  # a file's whole path on hover


SERIES_LABELS = """() => [...document.querySelectorAll('figure.chart')].map(figure => {
    const bySeries = {};
    for (const point of figure.querySelectorAll('circle.point')) {
        const cls = [...point.classList].find(c => /^s\\d$/.test(c));
        const said = point.querySelector('title').textContent;
        (bySeries[cls] = bySeries[cls] || new Set()).add(said.slice(0, said.lastIndexOf(', ')));
    }
    return Object.values(bySeries).map(names => [...names]);
})"""


@pytest.mark.parametrize("url", ["/column/aware_b1", "/study/Kestrel%20Commuter%20Panel", "/table/demo_flat"])
def test_no_series_mixes_two_sources(page, url):
    """`/column/visits_pw` drew one series averaging two studies' tables; now each series (a colour of a
    chart) is one quantity, named by its source and study, and no two series of a chart share a name."""
    page.goto(url)
    figures = page.evaluate(SERIES_LABELS)
    assert figures, url
    for series in figures:
        assert all(len(names) == 1 for names in series), series  # every point of a series: one quantity
        names = [names[0] for names in series]
        assert len(set(names)) == len(names)
        assert all(re.search(r" · \w+\([^,]+, [^)]+\) · .", name) for name in names), names


@pytest.mark.parametrize(
    ("url", "first"),
    [
        ("/search?column=s14r5", ("status", "result")),
        ("/search?kind=citations&column=s14r5", ("valid", "study")),
        ("/audit", ("severity", "rule", "result", "agent")),
    ],
)
def test_the_status_and_what_identifies_a_row_are_visible_without_scrolling_at_1280_px(page, url, first):
    """At 1,920 px the page was capped at 1,280 px and the claims' status and task were off-screen; now
    they come first, inside the window and the list's box, without scrolling."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(url)
    box = page.locator("div.scroll").first.bounding_box()
    for field in first:
        cell = page.locator(f"table.rows th[data-field='{field}']").first.bounding_box()
        assert cell["x"] >= box["x"], field
        assert cell["x"] + cell["width"] <= min(box["x"] + box["width"], 1280), field


def test_a_list_without_facets_takes_the_main_area(page):
    """The impact list was drawn in the facets' 240 px column."""
    page.goto("/search?kind=impact&study=*")
    assert page.locator("aside.facets").count() == 0
    assert page.locator("div.scroll").first.bounding_box()["width"] > 1000


def test_the_verdicts_why_is_read_whole_at_1280_px(page):
    """verify's "why" was cut at "1 of 7 clai" past the window's edge; now it follows the verdict and its
    result, in view."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/verify?verdict=differs")
    why = page.locator("tr.differs td.long").first
    box, scroll = why.bounding_box(), page.locator("div.scroll").first.bounding_box()
    assert box["x"] + box["width"] <= min(scroll["x"] + scroll["width"], 1280)
    assert why.inner_text().startswith("1 of")


@pytest.mark.parametrize("width", [1280, 1920])
def test_a_column_facet_shows_each_source_whole(browser, base_url, width):
    """The column facet counted `visits_pw` of two studies as one value; now each source is a value of its
    own, labelled with its study and table, read whole beside its count (wrapped between words if need be,
    never cut or under the list)."""
    context = browser.new_context(viewport={"width": width, "height": 900}, base_url=base_url)
    page = context.new_page()
    page.goto("/search?column=visits_pw")
    section = page.locator("aside.facets section", has=page.locator("h2", has_text="column"))
    values = section.locator("li a")
    labels = values.all_inner_texts()
    assert len(labels) == 2
    assert all(label.startswith("visits_pw · ") for label in labels)
    assert len(set(labels)) == 2
    for index in range(values.count()):
        link = values.nth(index)
        assert link.evaluate("a => a.scrollWidth <= a.clientWidth + 1"), labels[index]
        count = link.locator("xpath=following-sibling::span[@class='n']").bounding_box()
        box = link.bounding_box()
        assert count["x"] >= box["x"] + box["width"] - 1  # the count beside it, not over it
    aside, table = page.locator("aside.facets").bounding_box(), page.locator("div.scroll").first.bounding_box()
    overlap_x = aside["x"] < table["x"] + table["width"] and table["x"] < aside["x"] + aside["width"]
    overlap_y = aside["y"] < table["y"] + table["height"] and table["y"] < aside["y"] + aside["height"]
    assert not (overlap_x and overlap_y)
    context.close()
