"""Screenshots of every page of `archiver serve` on the sample transcripts (never on the hostile test
archives), at 1,280 px and 1,920 px, as docs/serve-NAME.png and docs/serve-NAME-1920.png show them.
They go to $ARCHIVER_SCREENSHOTS when it is set (`ARCHIVER_SCREENSHOTS=docs pytest
tests/test_serve_screenshots.py -m browser` remakes the docs' own), else to the test's temporary
folder; either way each page is checked to answer, draw without an error and fit the window's width
(a wide list scrolls in its own box)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from archiver.archive import Archive

from .serve_data import ROOT, SCREENSHOTS, serving

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright ('.[test]')")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

SAMPLES = ROOT / "sample_transcripts"
WIDTHS = {1280: "", 1920: "-1920"}
"""Each window's width, and the suffix of its screenshots' names."""
PAGES = SCREENSHOTS
"""Every page, by the name of its screenshot (docs/serve-NAME.png)."""


@pytest.fixture(scope="module")
def samples_url(tmp_path_factory, monkeypatch_module):
    folder = tmp_path_factory.mktemp("samples")
    db = str(folder / "archive.duckdb")
    monkeypatch_module.chdir(ROOT)  # stored paths shown relative to the repository, as a user's would be
    with Archive.open(db) as archive:
        archive.ingest([str(SAMPLES)], workers=1)
        archive.verify(str(SAMPLES / "data-layer" / "archiver-data-layer.toml"))
    with serving(db) as url:
        yield url


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_every_page_of_the_samples_reads_at_1280_and_1920_px(samples_url, tmp_path):
    folder = Path(os.environ.get("ARCHIVER_SCREENSHOTS") or tmp_path)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        errors: list[str] = []
        for width, suffix in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": 900}, base_url=samples_url)
            page.on("pageerror", lambda error: errors.append(str(error)))
            for name, url in PAGES.items():
                answer = page.goto(url)
                assert answer.status == 200, url
                assert page.evaluate("document.documentElement.scrollWidth") <= width, url
                page.screenshot(path=str(folder / f"serve-{name}{suffix}.png"), full_page=True)
            page.close()
        browser.close()
    assert errors == []
    made = sorted(f"serve-{n}{suffix}.png" for n in PAGES for suffix in WIDTHS.values())
    assert sorted(path.name for path in folder.glob("serve-*.png")) == made
