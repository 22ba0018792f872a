"""archiver serve: every page and its JSON twin, escaping, the CSP, the token, read-only (Starlette's
TestClient; the browser tests are tests/test_serve_browser.py)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from markupsafe import escape
from starlette.testclient import TestClient

from archiver.archive import Archive
from archiver.audit.summary import cited_figure
from archiver.cli import main
from archiver.query.lineage import CLAIM_FIELDS
from archiver.query.selection import Selection
from archiver.serve import create_app
from archiver.serve.cells import href
from archiver.serve.form import filters
from archiver.serve.headers import CSP

from .lineage_data import MALICIOUS, SCRIPT_STUDY
from .serve_data import ROOT, XSS, serve_archive

LAYER = ROOT / "sample_transcripts" / "data-layer" / "archiver-data-layer.toml"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> str:
    """An archive of the lineage files, a hostile task and the samples, verified against the samples' data
    layer (so that it holds verdicts of each kind)."""
    folder = tmp_path_factory.mktemp("serve")
    db = str(folder / "archive.duckdb")

    def write(name, content):
        path = folder / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(
            b"".join(json.dumps(item).encode() + b"\n" for item in content)
            if isinstance(content, list)
            else json.dumps(content).encode()
        )
        return str(path)

    with Archive.open(db) as archive:
        serve_archive(archive, write)
        archive.verify(str(LAYER))
    return db


@pytest.fixture(scope="module")
def client(served):
    with TestClient(create_app(served), base_url="http://localhost") as client:
        yield client


@pytest.fixture(autouse=True)
def _no_columns_kept(request):
    """Each test starts without the lists' remembered columns (cookies the shared client would carry)."""
    if "client" in request.fixturenames:
        request.getfixturevalue("client").cookies.clear()


def cli_json(db: str, *args: str):
    run = CliRunner().invoke(main, [*args, "--db", db, "--format", "json"])
    assert run.exit_code == 0, run.output
    return json.loads(run.output)


PAGES = [
    "/",
    "/search?column=s14r5",
    "/search?kind=citations&study=Versant+Mega+Tracker",
    "/search?kind=impact&column=s14r5",
    "/result/t1",
    "/study/Versant%20Mega%20Tracker",
    "/column/s14r5",
    "/period/W6%20(April%202026)",
    "/table/versant_flat",
    "/agent/Versant%20Insights",
    "/audit",
    "/verify",
]


def twin_of(url: str) -> str:
    path, _, query = url.partition("?")
    path = "/index.json" if path == "/" else path + ".json"
    return path + (f"?{query}" if query else "")


@pytest.mark.slow
@pytest.mark.parametrize("url", PAGES)
def test_every_page_and_its_json_twin_answer(client, url):
    page = client.get(url)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CSP
    assert "<script" not in page.text.lower()
    assert " style=" not in page.text  # CSP allows no inline style attribute
    twin = client.get(twin_of(url))
    assert twin.status_code == 200
    assert twin.headers["content-type"] == "application/json"
    negotiated = client.get(url, headers={"accept": "application/json"})
    assert negotiated.json() == twin.json()


@pytest.mark.slow
def test_the_overview_counts_are_the_archives(client, served):
    twin = client.get("/index.json").json()
    with Archive.open(served, read_only=True) as archive:
        assert twin["stats"] == archive.stats()
        report = archive.audit()
    assert twin["findings"] == report.summary["findings"]
    assert sum(twin["verdicts"].values()) == 6
    assert twin["verdicts"]["differs"] == 1
    page = client.get("/").text
    for rule, count in report.summary["findings"].items():
        assert f'href="/audit?rule={rule}"' in page
        if count:
            listed = client.get(f"/audit.json?rule={rule}").json()
            assert listed["count"] == count
    assert "<svg" in page
    assert '<a href="/search?since=' in page


@pytest.mark.slow
def test_the_snapshot_is_made_before_the_first_request(served, tmp_path):
    app = create_app(served)
    assert app.server.snapshots._snapshot is None
    app.server.warm()
    made = app.server.snapshots._snapshot
    assert made is not None
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get("/index.json").json()["stats"] == made.stats
    assert app.server.snapshots._snapshot is made  # not made again: the archive has not changed
    create_app(str(tmp_path / "none.duckdb")).server.warm()  # no archive: left to the requests to say


@pytest.mark.slow
def test_search_rows_are_the_cli_rows_with_its_field_names(client, served):
    twin = client.get("/search.json?column=s14r5&column=s12r2&order_by=-value").json()
    rows = cli_json(served, "query", "claims", "--column", "s14r5", "--column", "s12r2", "--order-by", "-value")
    assert twin["rows"] == rows
    assert twin["count"] == len(rows)
    assert twin["next_url"] is None  # one page holds them all
    for kind in ("citations", "impact"):
        twin = client.get(f"/search.json?kind={kind}&study=Versant+Mega+Tracker").json()
        assert twin["rows"] == cli_json(served, "query", kind, "--study", "Versant Mega Tracker")


def test_a_search_without_a_filter_lists_nothing(client):
    twin = client.get("/search.json").json()
    assert twin["needs_filter"]
    assert twin["rows"] == []
    assert "Give at least one filter" in client.get("/search?kind=citations").text


@pytest.mark.slow
def test_search_pages_and_counts(client, served):
    every = cli_json(served, "query", "claims", "--min-n", "0")
    first = client.get("/search.json?min_n=0&size=7").json()
    second = client.get("/search.json?min_n=0&size=7&page=2").json()
    assert first["count"] == len(every)
    assert first["rows"] == every[:7]
    assert second["rows"] == every[7:14]
    for order in ("-value", "-verdict"):  # a page chosen before its verdicts are joined, and one that cannot be
        ordered = cli_json(served, "query", "claims", "--min-n", "0", "--order-by", order)
        assert client.get(f"/search.json?min_n=0&size=7&page=2&order_by={order}").json()["rows"] == ordered[7:14]
    page = client.get("/search?min_n=0&size=7").text
    assert 'rel="next"' in page
    assert "page=2" in page


@pytest.mark.slow
def test_the_form_is_the_selection(client):
    assert [f.name for f in filters()] == list(Selection.__dataclass_fields__)
    page = client.get("/search?column=s14r5&valid=yes&since=2026-01-01").text
    for item in filters():
        assert f'name="{item.name}"' in page
    assert 'value="s14r5"' in page
    assert 'value="2026-01-01"' in page
    invalid = client.get("/search.json?column=s14r5&valid=no").json()["rows"]
    assert invalid
    assert {row["valid"] for row in invalid} == {False}


@pytest.mark.slow
def test_downloads_are_the_cli_outputs(client, served):
    got = client.get("/download/claims.csv?column=s14r5&kind=claims")
    assert got.status_code == 200
    assert "attachment" in got.headers["content-disposition"]
    run = CliRunner().invoke(main, ["query", "claims", "--column", "s14r5", "--db", served, "--format", "csv"])
    assert got.text == run.output
    lines = client.get("/download/citations.jsonl?study=Versant+Mega+Tracker").text.splitlines()
    assert [json.loads(line) for line in lines] == cli_json(
        served, "query", "citations", "--study", "Versant Mega Tracker"
    )
    table = pq.read_table(io.BytesIO(client.get("/download/impact.parquet?column=s14r5").content))
    assert table.to_pylist() == cli_json(served, "query", "impact", "--column", "s14r5")
    assert next(iter(csv.reader(io.StringIO(got.text))))[:5] == ["value", "unit", "stated", "pointer", "cell"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "tsv", "markdown"])
def test_every_format_of_query_but_its_terminal_table_downloads_as_the_cli_writes_it(client, served, fmt):
    """The web's downloads were listed apart from the CLI's formats (CSV, JSON Lines); now they are
    the CLI's registry's (`render.formats`), with Parquet."""
    got = client.get(f"/download/claims.{fmt}?column=s14r5")
    assert got.status_code == 200
    run = CliRunner().invoke(main, ["query", "claims", "--column", "s14r5", "--db", served, "--format", fmt])
    assert got.text == run.output
    page = client.get("/search?column=s14r5").text
    listed = re.search(r'<p class="downloads">(.*?)</p>', page, re.S).group(1)
    assert re.findall(r">(\w+)</a>", listed) == ["json", "jsonl", "csv", "tsv", "markdown", "parquet"]


@pytest.mark.slow
def test_the_audit_verdicts_and_conflicts_download_whole_errors_first(client, served):
    """Issue 41: `/download/audit.csv` was 404, and `/audit`, `/verify` and the conflicts offered no file."""
    got = client.get("/download/audit.csv")
    assert got.status_code == 200
    run = CliRunner().invoke(main, ["audit", "--db", served, "--format", "csv", "--fail-on", "never"])
    header, *rows = got.text.splitlines()
    cli_header, *cli_rows = run.output.splitlines()
    assert header == cli_header
    assert sorted(rows) == sorted(cli_rows)
    severities = [row["severity"] for row in csv.DictReader(io.StringIO(got.text))]
    assert "warning" in severities
    assert severities == sorted(severities), "errors before warnings"
    warnings = client.get("/download/audit.jsonl?severity=warning").text.splitlines()
    assert len(warnings) == severities.count("warning")
    verdicts = client.get("/download/verify.json").json()
    assert len(verdicts) == client.get("/verify.json").json()["count"]
    conflicts = client.get("/download/conflicts.csv?column=s14r5")
    assert conflicts.status_code == 200
    assert conflicts.text.splitlines()[0] == "task_id,message_id,part_index,detail,source_path,locator,result_key"
    small = client.get("/download/small.json?column=visits_pw").json()  # a subject's small bases, whole
    twin = client.get("/column/visits_pw.json").json()["small_bases"]
    assert len(small) == twin["count"] > 0
    assert small[: len(twin["rows"])] == twin["rows"]
    assert '<a href="/download/small.csv?column=visits_pw" download>csv</a>' in client.get("/column/visits_pw").text
    for page, address in (("/audit", "/download/audit.csv"), ("/verify", "/download/verify.tsv")):
        assert f'href="{address}"' in client.get(page).text, page
    assert client.get("/download/nothing.csv").status_code == 404


@pytest.mark.slow
def test_the_result_page_is_the_show_layout_with_links(client, served):
    page = client.get("/result/t1").text
    with Archive.open(served, read_only=True) as archive:
        shown = archive.render("t1", "html")
    body = shown.split("<body>", 1)[1].split("</h1>", 1)[1].split("</body>")[0].strip()
    assert body[body.index("<h3>") :] in page  # the Parts as `archiver show --format html` writes them
    assert body[: body.index("stored in")] in page  # and its header, but that each copy links to its page
    for target in ("/agent/Versant%20Insights", "/study/Versant%20Mega%20Tracker", "/column/s14r5"):
        assert f'href="{target}"' in page
    assert "stored in 2 copies" in page
    assert "WARNING" in page
    twin = client.get("/result/t1.json").json()
    assert twin["results"][0]["task_id"] == "t1"
    assert len(twin["results"][0]["source_paths"]) == 2


@pytest.mark.slow
def test_findings_link_to_their_part_in_the_transcript(client):
    twin = client.get("/audit.json?rule=small-base").json()
    assert twin["rows"]
    assert {row["rule"] for row in twin["rows"]} == {"small-base"}
    row = next(r for r in twin["rows"] if r["task_id"] and r["part_index"] is not None)
    page = client.get("/audit?rule=small-base").text
    target = f"/result/{quote(row['task_id'], safe='')}#part-{row['part_index']}"
    assert f'href="{target}"' in page
    assert f'id="part-{row["part_index"]}"' in client.get(target.split("#")[0]).text
    every = client.get("/audit.json?size=500").json()["rows"]
    name = next(r["agent"] for r in every if r["agent"])
    agent = client.get("/audit.json", params={"agent": name, "size": 500}).json()
    assert agent["rows"] == [r for r in every if r["agent"] == name]


def test_verdicts_show_the_rederived_value_beside_the_claimed(client):
    twin = client.get("/verify.json?verdict=differs").json()
    assert twin["count"] == 1
    difference = twin["rows"][0]["differences"][0]
    assert {"pointer", "claimed", "rerun"} <= set(difference)
    page = client.get("/verify?verdict=differs").text
    assert f"{difference['claimed']} → " in page


@pytest.mark.slow
def test_a_column_page_lists_its_periods_and_small_bases(client):
    twin = client.get("/column/aware_b1.json").json()
    assert [row["period"] for row in twin["by_period"]] == ["W1 (June 2026)", "W2 (July 2026)", "W3 (August 2026)"]
    small = client.get("/column/visits_pw.json").json()["small_bases"]["rows"]
    assert all(row["base_n"] < 30 for row in small)


def charted(page: str) -> dict[str, list[str]]:
    """Each chart panel of a page (by its unit) and the hover texts of its points."""
    panels = re.findall(r'<figure class="chart" data-unit="(\w+)">(.*?)</figure>', page, re.S)
    return {unit: re.findall(r"<circle[^>]*><title>([^<]*)</title>", inner) for unit, inner in panels}


def test_a_quantity_is_its_source_and_numbers_on_bad_citations_stand_apart(client):
    """/column/visits_pw drew one series "total · visits_pw (extractMean)" at 740: the mean of Meridian's
    1,480 and an invalid Northwind citation's 0. s14r5's "By period" pooled shares with counts (median
    1,210). Now each quantity (study, table, column, function, cell, unit, standing of its citations) is
    a row of its own, and nothing pools values across quantities."""
    visits = client.get("/column/visits_pw.json").json()
    totals = {(r["study"], r["table"], r["standing"]): r["mean"] for r in visits["quantities"] if r["cell"] == "total"}
    assert totals == {
        ("Meridian Shopper Panel", "meridian_panel", "valid"): 1480,
        ("Northwind Retail Pulse", "nw_pulse_long", "invalid"): 0,
    }
    assert [set(row) for row in visits["by_period"]] == [
        {"period", "citations", "claim_values", "base_min", "base_max"}
    ]
    rows = client.get("/column/s14r5.json").json()["quantities"]
    keys = [
        tuple(r[f] for f in ("study", "table", "column", "function", "cell", "unit", "standing", "period"))
        for r in rows
    ]
    assert len(keys) == len(set(keys))
    valid = {r["cell"]: r["mean"] for r in rows if r["study"] == "Versant Mega Tracker" and r["standing"] == "valid"}
    assert (valid["18-34: share"], valid["18-34: n"], valid["total"]) == (0.42, 1210, 4210)
    assert {r["standing"] for r in rows} == {"valid", "type lost", "invalid"}
    page = client.get("/column/s14r5").text
    assert "median" not in page
    assert page.count('<tr class="not-valid">') == sum(r["standing"] != "valid" for r in rows)


def test_the_quantities_table_pages_and_its_twin_holds_every_quantity(client):
    """A study's quantities table at 10M claims was one table of 5,000 rows (15,000 links): most of the page's
    0.7 s. It pages as every list does (`quantities_page`, the page's `size`); the twin keeps every row."""
    rows = client.get("/column/s14r5.json?size=2").json()["quantities"]
    assert len(rows) > 4
    shown = []
    address = "/column/s14r5?size=2"
    for number in range(1, -(-len(rows) // 2) + 1):
        page = client.get(address).text
        table = page[page.index("What was claimed, per quantity") : page.index("By period")]
        assert f"{len(rows)} rows · page {number} of {-(-len(rows) // 2)}" in table
        lines = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
        cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in lines]
        shown += [(c[0], re.sub("<[^>]+>", "", c[1])) for c in cells if c]
        following = re.search(r'<a rel="next" href="([^"]+)">', table)
        if following is None:
            break
        address = following.group(1).replace("&amp;", "&")
        assert f"quantities_page={number + 1}" in address
    assert shown == [(r["standing"], r["cell"]) for r in rows]


def test_a_chart_draws_each_quantity_on_an_axis_of_its_unit_only_over_several_periods(client):
    """Each series is one quantity, named by its cell, source and study; a page of one period (the period
    page, a column cited in one period) drew "by period" charts of one point: now it draws none."""
    panels = charted(client.get("/column/aware_b1").text)
    assert list(panels) == ["share", "count", "base"]
    source = "extractFunnel(demo_flat, aware_b1) · Verify Demo Tracker"
    assert f"18-34: share · {source}, W1 (June 2026): 57.2%" in panels["share"]
    assert f"total · {source}, W2 (July 2026): 120" in panels["count"]
    waves = ("W1 (June 2026)", "W2 (July 2026)", "W3 (August 2026)")
    assert panels["base"] == [f"base n · {source}, {wave}: 120" for wave in waves]
    assert all(float(t.rsplit(": ", 1)[1].rstrip("%")) <= 100 for t in panels["share"])
    for one in ("/column/s14r5", "/period/" + quote("W6 (April 2026)")):
        page = client.get(one).text
        assert charted(page) == {}, one
        assert "one period, so no chart" in page


def test_a_period_label_is_drawn_whole_and_periods_in_their_order(client):
    """Kestrel's periods were cut to 18 characters ("Wave 1 (November 2"); W1, W2, W3 stay in order
    when only one of them has fielded dates."""
    page = client.get("/study/" + quote("Kestrel Commuter Panel", safe="")).text
    label = re.search(r'<text class="tick"[^>]*>((?:<tspan[^>]*>[^<]*</tspan>)+)</text>', page).group(1)
    assert " ".join(re.findall(r">([^<]+)</tspan>", label)) == "Wave 1 (November 2025)"
    shares = charted(client.get("/column/aware_b1").text)["share"]
    assert [t.rsplit(", ", 1)[1].split(":")[0] for t in shares if t.startswith("18-34: share")] == [
        "W1 (June 2026)",
        "W2 (July 2026)",
        "W3 (August 2026)",
    ]


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/search?study=" + quote(f"Study {XSS}"),
        "/search?kind=citations&column=" + quote(f"c{XSS}"),
        "/result/t-xss",
        "/study/" + quote(f"Study {XSS}", safe=""),
        "/column/" + quote(f"c{XSS}", safe=""),
        "/agent/" + quote(f"Agent {XSS}", safe=""),
        "/search?study=" + quote(SCRIPT_STUDY),
        "/search?study=" + quote(MALICIOUS),
        "/audit",
        "/result/" + quote(XSS, safe=""),
    ],
)
def test_every_value_is_escaped(client, url):
    page = client.get(url)
    assert "<script" not in page.text.lower()
    assert "<img" not in page.text.lower()
    assert page.headers["content-security-policy"] == CSP


def test_hostile_fields_are_shown_as_text(client):
    page = client.get("/result/t-xss").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    twin = client.get("/search.json?task=t-xss").json()
    assert twin["rows"][0]["study"] == f"Study {XSS}"


def test_bad_input_is_one_line_not_a_traceback(client):
    bad = client.get("/search?since=yesterday-ish")
    assert bad.status_code == 400
    assert "since" in bad.text
    assert "Traceback" not in bad.text
    assert client.get("/search.json?min_n=lots").json()["error"].startswith("min_n:")
    assert client.get("/search?kind=everything").status_code == 400
    missing = client.get("/result/no-such-task.json")
    assert missing.status_code == 404
    assert "no task, message or context" in missing.json()["error"]
    assert client.get("/search?column=s14r5&order_by=nonsense").status_code == 400
    assert client.get("/nowhere").headers["content-security-policy"] == CSP


@pytest.mark.slow
def test_serve_is_read_only_and_leaves_the_archive_to_writers(client, served):
    before = hashlib.sha256(Path(served).read_bytes()).hexdigest()
    for url in PAGES:
        client.get(url)
    assert client.post("/search", data={"column": "x"}).status_code == 405
    assert client.delete("/").status_code == 405
    assert hashlib.sha256(Path(served).read_bytes()).hexdigest() == before
    with Archive.open(served, wait=0) as writer:  # no connection is held between requests
        assert writer.stats()["claims"] > 0


HOLD = (
    "import sys; from archiver.archive import Archive; a = Archive.open(sys.argv[1]); "
    "print('held', flush=True); sys.stdin.read()"
)


@pytest.mark.slow  # waits out the request's 2 s for the writer
def test_an_archive_being_written_answers_503_until_the_commit(served):
    """A writer (another process: an ingest) holds the file: the page says so at once, and answers again
    as soon as the writer lets go."""
    app = create_app(served)
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLD, served], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline().strip() == "held"
        with TestClient(app, base_url="http://localhost") as client:
            busy = client.get("/index.json")
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "1"
        assert "busy" in busy.json()["error"]
    finally:
        writer.communicate("", timeout=30)
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get("/index.json").status_code == 200


@pytest.mark.slow
def test_the_token_is_checked_on_every_request(served):
    with TestClient(create_app(served, token="s3cret-token"), base_url="http://localhost") as client:
        for url in (
            "/",
            "/index.json",
            "/search.json?column=s14r5",
            "/static/serve.css",
            "/download/claims.csv?column=s14r5",
        ):
            refused = client.get(url)
            assert refused.status_code == 401, url
            assert refused.headers["content-security-policy"] == CSP
        assert client.get("/index.json", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/index.json", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
        assert client.get("/?token=wrong").status_code == 401
        opened = client.get("/search?column=s14r5&token=s3cret-token", follow_redirects=False)
        assert opened.status_code == 303
        assert opened.headers["location"] == "/search?column=s14r5"
        assert "httponly" in opened.headers["set-cookie"].lower()
        assert client.get("/search.json?column=s14r5").status_code == 200  # the cookie, from now on


def test_another_host_needs_a_token(served, monkeypatch):
    monkeypatch.delenv("ARCHIVER_TOKEN", raising=False)
    run = CliRunner().invoke(main, ["serve", "--db", served, "--host", "0.0.0.0"])
    assert run.exit_code == 2
    assert "needs a token" in run.output
    assert "Traceback" not in run.output
    assert re.search(r"--host", run.output)


def test_no_archive_or_a_taken_port_is_one_line_before_serving(served, tmp_path):
    missing = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "none.duckdb"), "--port", "0"])
    assert (missing.exit_code, missing.output) == (
        1,
        f"Error: {tmp_path / 'none.duckdb'}: no archive here (ingest something first, or pass --db)\n",
    )
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        run = CliRunner().invoke(main, ["serve", "--db", served, "--port", str(port)])
    assert run.exit_code == 2
    assert run.output.strip().splitlines()[-1] == (
        f"Error: Invalid value for '--port': cannot listen on 127.0.0.1:{port}: Address already in use"
    )


@pytest.mark.slow
def test_a_writer_gets_its_turn_while_requests_never_pause(served, tmp_path):
    """Requests that overlap without end share one read-only connection; it steps aside every
    `HOLD_SECONDS` so that an ingest waiting for the file (its --wait, 5 s by default) gets in, and commits."""
    import shutil
    import threading
    import time

    db = tmp_path / "a.duckdb"
    shutil.copy(served, db)
    server = create_app(str(db)).server
    stop, read = threading.Event(), []

    def reader(offset: float) -> None:
        time.sleep(offset)
        while not stop.is_set():
            with server.archive() as archive:
                read.append(archive.con.execute("SELECT count(*) FROM sources").fetchone()[0])
                time.sleep(0.05)

    readers = [threading.Thread(target=reader, args=(n * 0.0125,)) for n in range(4)]
    for thread in readers:
        thread.start()
    try:
        time.sleep(0.5)
        before = len(read)
        new = tmp_path / "new.jsonl"  # a transcript the archive does not hold yet
        lines = (ROOT / "sample_transcripts/versant-insights/rpc-v1.jsonl").read_bytes().splitlines(keepends=True)
        new.write_bytes(b"".join(lines[:2]))
        sample, wait = str(new), "5"  # the default --wait
        ingest = subprocess.run([sys.executable, "-m", "archiver", "ingest", sample, "--db", str(db), "--wait", wait],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        time.sleep(0.3)
    finally:
        stop.set()
        for thread in readers:
            thread.join()
    assert ingest.returncode == 0, ingest.stderr
    assert before > 0
    assert read[-1] == read[0] + 1  # the readers went on, and see the ingest's commit


@pytest.mark.parametrize(("query", "status"), [("page=abc", 400), ("page=-5", 200), ("page=" + "9" * 30, 200),
                                               ("size=" + "9" * 30, 200)])  # fmt: skip
def test_any_page_number_is_answered_or_refused_never_an_error_of_the_server(client, query, status):
    answer = client.get(f"/search.json?kind=claims&column=s14r5&{query}")
    assert answer.status_code == status, answer.text
    if status == 200:
        assert answer.json()["page_size"] <= 500


# Hostile clients (issue 26): the answers kept, the values refused, the redirect, the server's own answers.


def big_result_archive(folder: Path) -> str:
    """An archive of one task whose data Part is large (5,000 rows, about 200 kB of JSON)."""
    from .lineage_data import task

    rows = [{"label": f"row {n}", "share": n / 5_000} for n in range(5_000)]
    path = folder / "big.jsonl"
    path.write_bytes(json.dumps(task("t-big", [{"data": {"rows": rows}}])).encode() + b"\n")
    db = str(folder / "big.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(path)], workers=1)
    return db


@pytest.mark.slow
def test_answers_are_kept_by_the_question_not_the_query_string(tmp_path):
    """Parameters a page does not know change nothing: `?junk=N` on a large result keeps one answer (its
    views and the twin made of them), not one per N (before: one per distinct query string, 512 of them,
    ~14 MB each for a 2 MB Part)."""
    app = create_app(big_result_archive(tmp_path))
    answers = app.server.snapshots.answers
    with TestClient(app, base_url="http://localhost") as client:
        for n in range(10):
            assert client.get(f"/result/t-big.json?junk={n}").status_code == 200
        assert len(answers) == 2  # the result's views, and its twin
        assert client.get("/result/t-big?utm=x").status_code == 200  # the page shares its twin's answer
        assert len(answers) == 3  # and keeps its transcript laid out
        one = answers.bytes
        assert client.get("/result/t-big.json?copy=" + quote(str(tmp_path / "big.jsonl"))).status_code == 200
    assert len(answers) == 5
    assert 2**20 < one < answers.bytes  # the footprint counts the rows' objects, not just their JSON


@pytest.mark.slow
def test_answers_are_bounded_in_bytes_the_least_recent_dropped_first(client):
    answers = client.app.server.snapshots.answers
    budget = answers.budget
    answers.clear()  # what the other tests asked was kept within the whole budget
    answers.budget = 96 * 1024  # a few answers: a page of claims with its facets is about 20 KiB
    try:
        asked = [f"/search.json?min_n=0&size=5&page={n}" for n in range(1, 40)]
        for url in asked:
            assert client.get(url).status_code == 200
            assert answers.bytes <= answers.budget
        assert 0 < len(answers) < len(asked)
        latest = client.get(asked[-1]).json()
        assert latest["page"] == 39
        assert len(latest["rows"]) <= 5
        assert client.get(asked[0]).json() == client.get("/search.json?min_n=0&size=5").json()
    finally:
        answers.budget = budget


def test_answers_budget_counts_what_an_answer_holds():
    from archiver.serve.data import Answers, footprint

    kept = Answers(budget=20_000)
    big, small = ["x" * 900], ["y" * 10]
    kept.put(("too big",), ["z" * 11_000], footprint(["z" * 11_000]))  # over half the budget: not kept
    assert "too big" not in [q[0] for q in kept._kept]
    for n in range(20):
        kept.put(("big", n), [*big, n], footprint([*big, n]))
    assert kept.bytes <= 20_000
    assert ("big", 0) not in kept
    assert ("big", 19) in kept
    oldest = min(n for n in range(20) if ("big", n) in kept)
    assert kept.get(("big", oldest)) == [*big, oldest]  # asked again: now the most recent
    kept.put(("big", 20), [*big, 20], footprint([*big, 20]))
    assert ("big", oldest) in kept
    assert ("big", oldest + 1) not in kept
    kept.put(("small",), small, footprint(small))
    assert kept.bytes <= 20_000
    assert footprint(big) > 900
    many = [f"{n:0100}" for n in range(100)]
    assert 1000 <= footprint(many, enough=1000) < 2000 < footprint(many)  # counted only until enough


LAST_DAY = "9999-12-31"


@pytest.mark.slow
@pytest.mark.parametrize("command", [["query", "claims"], ["audit"], ["query", "citations"]])
def test_until_the_last_day_is_every_time_not_a_traceback(served, command):
    """--until 9999-12-31 selects what has a time, as --since 0001-01-01 does (before: OverflowError)."""
    timed = CliRunner().invoke(main, [*command, "--since", "0001-01-01", "--db", served, "--format", "json"])
    until = CliRunner().invoke(main, [*command, "--until", LAST_DAY, "--db", served, "--format", "json"])
    assert until.exception is None or isinstance(until.exception, SystemExit), until.exception
    assert until.exit_code == timed.exit_code
    rows, expected = (_rows(json.loads(run.stdout)) for run in (until, timed))
    assert rows == expected
    assert rows


def _rows(printed):
    """The rows a command printed (the audit's findings: its summary names the filters too)."""
    return printed["findings"] if isinstance(printed, dict) else printed


def test_export_until_the_last_day_exports_every_record(served, tmp_path):
    every = CliRunner().invoke(
        main, ["export", "--raw", str(tmp_path / "a.jsonl"), "--since", "0001-01-01", "--db", served]
    )
    until = CliRunner().invoke(
        main, ["export", "--raw", str(tmp_path / "b.jsonl"), "--until", LAST_DAY, "--db", served]
    )
    assert (until.exit_code, every.exit_code) == (0, 0), until.output
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    "url",
    [
        f"/search.json?kind=claims&min_n=0&until={LAST_DAY}",
        f"/search.json?kind=citations&min_n=0&until={LAST_DAY}",
        f"/audit.json?until={LAST_DAY}",
        f"/verify.json?until={LAST_DAY}",
        f"/search.json?min_n=0&until={LAST_DAY}T23:00:00-05:00",
        "/search.json?min_n=0&since=0001-01-01T00:00:00%2B05:00",
    ],
)
def test_filtered_pages_until_the_last_day_answer(client, url):
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    timed = client.get(url.split("until=")[0].split("since=")[0] + "since=0001-01-01")  # every row with a time
    assert timed.status_code == 200
    assert answer.json()["rows"] == timed.json()["rows"]


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("since=0000-01-01", "since"),
        ("until=10000-01-01", "until"),
        ("until=9999-12-32", "until"),
        ("min_n=nan", "min_n"),
        ("min_n=inf", "min_n"),
        ("max_n=-inf", "max_n"),
        ("max_n=1e999", "max_n"),
        ("size=1.5", "size"),
        ("page=" + "9" * 5000, "page"),
    ],
)
def test_a_value_that_cannot_be_used_is_a_400_naming_its_parameter(client, query, parameter):
    for path in ("/search.json?column=s14r5&", "/audit.json?", "/verify.json?"):
        if parameter in ("min_n", "max_n") and path == "/audit.json?":
            continue  # the audit's list takes no citation filter
        answer = client.get(path + query)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["error"].startswith(f"{parameter}: "), answer.text
        assert len(answer.json()["error"]) < 200  # one line, whatever the value's length


@pytest.mark.parametrize(
    ("url", "parameter"),
    [
        ("/audit.json?rule=no-such-rule", "rule"),
        ("/verify.json?verdict=maybe", "verdict"),
        ("/audit.json?severity=fatal", "severity"),
    ],
)
def test_an_unknown_rule_verdict_or_severity_is_a_400_naming_it(client, url, parameter):
    answer = client.get(url)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(f"{parameter}: "), answer.text


@pytest.mark.slow
@pytest.mark.parametrize("query", ["size=0", "size=-3", "page=0", "size=0&page=0"])
def test_a_page_or_size_out_of_range_is_the_nearest_one(client, query):
    for path in ("/search", "/search.json", "/search.json?column=s14r5&", "/audit.json", "/verify.json"):
        answer = client.get(path + ("&" if "?" in path else "?") + query)
        assert answer.status_code == 200, (path, answer.text)
        if path.endswith(".json") or ".json?" in path:
            assert answer.json()["page_size"] >= 1
            assert answer.json()["page"] >= 1


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["query", "claims", "--min-n", "nan"], "--min-n"),
        (["query", "claims", "--max-n", "inf"], "--max-n"),
        (["audit", "--until", "10000-01-01"], "--until"),
        (["export", "--raw", "-", "--since", "0000-01-01"], "--since"),
    ],
)
def test_a_cli_value_that_cannot_be_used_is_a_usage_error(served, args, option):
    run = CliRunner().invoke(main, [*args, "--db", served])
    assert run.exit_code == 2, run.output
    assert option in run.output.strip().splitlines()[-1]
    assert "Traceback" not in run.output


@pytest.mark.slow
def test_a_limit_past_what_any_table_holds_is_every_row(served):
    every = cli_json(served, "query", "claims")
    assert cli_json(served, "query", "claims", "--limit", "9" * 30) == every  # before: a ConversionException


@pytest.mark.slow
def test_the_python_api_takes_the_last_day_and_refuses_what_is_no_number(served):
    from archiver.errors import UsageError

    with Archive.open(served, read_only=True) as archive:
        timed = list(archive.claims(since="0001-01-01"))
        assert list(archive.claims(until=LAST_DAY)) == timed != []
    for bad in (float("nan"), float("inf"), "lots"):
        with pytest.raises(UsageError, match="not a finite number"):
            Selection(min_n=bad)


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example/x", "///evil.example", "/%2F%2Fevil.example"])
def test_no_redirect_leaves_the_origin(served, path):
    with TestClient(create_app(served, token="s3cret-token"), base_url="http://localhost") as client:
        opened = client.get(f"http://localhost{path}?token=s3cret-token&column=s14r5", follow_redirects=False)
    assert opened.status_code == 303
    location = opened.headers["location"]
    assert location.startswith("/"), location
    assert location[1:2] not in ("/", "\\"), location
    assert location.endswith("?column=s14r5")


SERVE_LIMITED = """
import sys
from archiver.serve.app import serve
from archiver.serve.connections import Limits
serve(sys.argv[1], port=0, log=False, limits=Limits(request_seconds=float(sys.argv[2])))
"""


@pytest.fixture
def limited_server(served):
    """`archiver serve` in a process whose file limit is 320 (so at most 128 connections), each request due
    within 2 s of its connection: its port."""
    import os
    import resource

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (320, 320))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE_LIMITED, served, "2"], stdout=subprocess.PIPE, text=True, preexec_fn=lower, env=env
    )
    try:
        port = int(re.search(r":(\d+)/ ", server.stdout.readline()).group(1))
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.slow
def test_slow_clients_cannot_keep_a_normal_request_out(limited_server):
    """400 connections that never finish their headers (more than the file limit leaves room for): a normal
    request meanwhile is answered 200, and each slow one is closed once its 2 s are up (before: the file
    limit was reached, and every normal request failed)."""
    import socket
    import time
    import urllib.request

    slow = []
    try:
        for _ in range(400):
            connection = socket.create_connection(("127.0.0.1", limited_server), timeout=5)
            connection.sendall(b"GET /index.json HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(connection)
        for _ in range(3):
            with urllib.request.urlopen(f"http://127.0.0.1:{limited_server}/index.json", timeout=5) as answer:
                assert answer.status == 200
                assert json.loads(answer.read())["stats"]["tasks"] > 0
        time.sleep(1)
        for connection in slow:  # a byte more does not move a request's deadline
            with contextlib.suppress(OSError):
                connection.sendall(b"1")
        time.sleep(1.5)
        assert all(_closed(connection) for connection in slow)
    finally:
        for connection in slow:
            connection.close()


def _closed(connection) -> bool:
    """Whether the server has closed `connection` (what it reads is its end, or a reset)."""
    connection.settimeout(2)
    try:
        return connection.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _raw(port: int, request: bytes) -> bytes:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


@pytest.mark.slow
def test_the_servers_own_answers_carry_the_csp(limited_server):
    """A request line the server cannot parse, and a head larger than it reads, are answered by uvicorn
    before the application: with the same headers (before: no CSP)."""
    for request, status in (
        (b"GARBAGE /\x00 HTTP/9\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", b"431"),
    ):
        head = _raw(limited_server, request).split(b"\r\n\r\n")[0].decode().lower().splitlines()
        assert head[0].split()[1] == status.decode(), head
        assert f"content-security-policy: {CSP}".lower() in head
        assert "x-frame-options: deny" in head


# The shape of the application: one route per page, the data built once.


def test_each_page_is_one_route_with_its_json_twin_optional(served):
    """Every route was listed twice (`/search` and `/search.json`); now one route answers both."""
    from archiver.serve.pages import PAGES

    app = create_app(served).app
    paths = [route.path for route in app.routes]
    assert not [path for path in paths if path.endswith(".json")]
    assert (
        len([route for route in app.routes if route.endpoint.__name__ == "endpoint"]) == len(PAGES) + 1
    )  # + downloads


def test_the_html_page_and_its_twin_are_made_of_one_answer(client):
    """The page's table is drawn from the rows its twin carries (the data is built once)."""
    twin = client.get("/search.json?column=s14r5&_col=value&_col=task_id").json()
    page = client.get("/search?column=s14r5&_col=value&_col=task_id").text
    cells = re.findall(r'<td class="(?:num|str)">(?:<a [^>]*>)?([^<]*)', page)
    assert cells == [text for row in twin["rows"] for text in (f"{row['value']:,.6g}", row["task_id"])]


# Tables people read (after Datasette's): default columns, ?_col=, facets, labels in words.


def headings(page: str) -> list[str]:
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", page, re.S).group(1)
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", head)]


def test_a_list_shows_its_default_columns_in_words(client):
    """The search showed every one of 28 fields, headed by their names; now nine, in words."""
    page = client.get("/search?column=s14r5").text
    assert headings(page) == [
        "status",
        "task or message",
        "value",
        "what it measures",
        "study",
        "period",
        "source",
        "base n",
        "warnings",
    ]
    assert '<td class="str">18-34: share, s14r5</td>' in page
    assert '<td class="str">extractFunnel(versant_flat, s14r5)</td>' in page
    citations = client.get("/search?kind=citations&column=s14r5").text
    assert headings(citations) == [
        "valid",
        "study",
        "period",
        "source",
        "base n",
        "warnings",
        "claims",
        "results",
        "agents",
    ]
    audit = client.get("/audit?rule=small-base").text
    assert headings(audit) == ["severity", "rule", "task or message", "agent", "what is wrong", "file", "place in file"]
    message = re.search(r"<tr><td[^>]*>warning</td><td[^>]*>small-base</td>.*?</tr>", audit, re.S).group(0)
    assert '<a href="/result/msg-' in message or '<a href="/result/t' in message


def test_columns_are_chosen_with_col_and_offered_in_a_menu(client):
    page = client.get("/search?column=s14r5&_col=base_n&_col=value&_col=citation_hash").text
    assert headings(page) == ["value", "base n", "citation"]  # the defaults' order, then the list's own
    menu = re.search(r'<details class="columns">(.*?)</details>', page, re.S).group(1)
    offered = re.findall(r'type="checkbox" name="_col" value="([^"]+)"( checked)?', menu)
    assert len(offered) == 3 + len(CLAIM_FIELDS)  # what it measures, its source, its result, and every field
    assert [name for name, checked in offered if checked] == ["value", "base_n", "citation_hash"]
    assert '<input type="hidden" name="column" value="s14r5">' in menu
    refused = client.get("/search.json?column=s14r5&_col=nope")
    assert refused.status_code == 400
    assert refused.json()["error"].startswith(
        "_col: 'nope' is not a column of this list; one of measures, source, result, value"
    )


def test_a_choice_of_columns_is_kept_per_list_until_the_defaults_are_asked_for(served):
    """Columns chosen with `?_col=` were forgotten on the next page of another search; now each list
    keeps its choice (a cookie per list) until "The default columns" is pressed."""
    with TestClient(create_app(served), base_url="http://localhost") as own:
        own.get("/search?column=s14r5&_col=value&_col=task_id")
        assert headings(own.get("/search?study=Versant*").text) == ["value", "task"]
        assert headings(own.get("/search?kind=citations&column=s14r5").text)[0] == "valid"  # another list
        assert headings(own.get("/audit?rule=small-base").text)[0] == "severity"
        defaults = own.get("/search?column=s14r5&_col=value&_col=_default").text
        assert headings(defaults)[:2] == ["status", "task or message"]
        assert headings(own.get("/search?study=Versant*").text)[:2] == ["status", "task or message"]


@pytest.mark.slow
def test_facets_count_the_rows_beside_the_list_and_narrow_it(client, served):
    page = client.get("/search?study=Versant*").text
    facets = re.search(r'<aside class="facets">(.*?)</aside>', page, re.S).group(1)
    assert re.findall(r"<h2>([^<]+)</h2>", facets) == ["study", "period", "column", "agent"]
    rows = cli_json(served, "query", "claims", "--study", "Versant*")
    for heading, field in (("study", "study"), ("column", "source_column"), ("agent", "agent")):
        listed = re.search(rf"<h2>{heading}</h2><ul>(.*?)</ul>", facets, re.S).group(1)
        counted = {name: int(n) for name, n in re.findall(r'>([^<]+)</a> <span class="n">([^<]+)</span>', listed)}
        assert counted == {v: sum(r[field] == v for r in rows) for v in {r[field] for r in rows} if v is not None}
    assert '<a href="/search?study=Versant+Mega+Tracker">Versant Mega Tracker</a>' in facets
    audit = client.get("/audit").text
    rules = re.search(r"<h2>rule</h2><ul>(.*?)</ul>", audit, re.S).group(1)
    assert '<a href="/audit?rule=small-base">small-base</a>' in rules


def test_the_overview_leads_with_the_validly_cited_figure(client, served):
    """The overview opened with 27 equal counters; the validly cited share was on no page (issue 41)."""
    page = client.get("/").text
    with Archive.open(served, read_only=True) as archive:
        summary = archive.audit().summary
    figure = re.search(r'<p class="figure"><strong>([^<]+)</strong>', page).group(1)
    assert figure == cited_figure(summary)
    assert page.index(figure) < page.index("<h2>The archive</h2>") < page.index("<summary>more counts</summary>")
    for group in summary["per_agent"]:
        if group["quantitative_results"] and group["agent"]:
            row = f'<a href="{escape(href("agent", group["agent"]))}">'
            assert row in page.split("<h2>The archive</h2>")[0]
    first = page.split("<summary>more counts</summary>")[0]
    assert "stored copies of results" in first
    assert "rows healed after an interrupted write" not in first


def test_agent_and_study_pages_lead_with_their_validly_cited_figure(client, served):
    with Archive.open(served, read_only=True) as archive:
        summary = archive.audit().summary
    for kind in ("agent", "study"):
        group = next(g for g in summary[f"per_{kind}"] if g[kind] and g["quantitative_results"])
        page = client.get(href(kind, group[kind])).text
        assert f'<p class="figure"><strong>{cited_figure(group)}</strong>' in page
        twin = client.get(twin_of(href(kind, group[kind]))).json()
        assert twin["validly_cited"]["validly_cited_results"] == group["validly_cited_results"]
    assert '<p class="figure">' not in client.get("/column/s14r5").text


def test_a_result_page_links_each_stored_copy(client, served):
    """The result page said "(--copy FILE shows one)", a flag of the CLI, instead of linking the copies."""
    with Archive.open(served, read_only=True) as archive:
        task, paths = archive.con.execute(
            "SELECT task_id, list(DISTINCT source_path ORDER BY source_path) FROM results WHERE task_id IS NOT NULL "
            "GROUP BY 1 HAVING count(DISTINCT source_path) > 1 ORDER BY 1 LIMIT 1"
        ).fetchone()
    page = client.get(href("result", task)).text
    assert "--copy FILE" not in page
    assert "copies (each links to it):" in page
    for path in paths:
        assert f'<a href="{escape(href("result", task, copy=path))}">' in page
    other = client.get(href("result", task, copy=paths[-1])).text
    assert re.search(re.escape(f'{escape(href("result", task, copy=paths[-1]))}">') + r"[^<]+ \(shown\)</a>", other)


def test_most_cited_chips_count_the_results_citing_them(client, served):
    twin = client.get("/index.json").json()
    with Archive.open(served, read_only=True) as archive:
        studies = dict(archive.con.execute(
            "SELECT study, count(DISTINCT result_key) FROM citations WHERE study IS NOT NULL GROUP BY 1"
        ).fetchall())  # fmt: skip
    assert {row["name"]: row["results"] for row in twin["most_cited"]["study"]} == studies
    first = twin["most_cited"]["study"][0]
    assert f'{escape(first["name"])} <span class="n">{first["results"]}</span></a>' in client.get("/").text


def test_the_forms_and_the_overview_speak_in_words(client):
    """The form's labels were the CLI's flags (`--min-n`), the overview's tiles raw keys (`healed_rows`)."""
    page = client.get("/search").text
    labels = re.findall(r"<label[^>]*><span>([^<]+)</span>", page)
    assert not [label for label in labels if label.startswith("-") or "_" in label]
    assert "<span>Smallest base n</span>" in page
    assert ">with warnings</option>" in page
    overview = client.get("/").text
    tiles = re.findall(r"<dt>([^<]+)</dt>", overview)
    assert not [tile for tile in tiles if "_" in tile]
    assert "claims in stored copies" in tiles
    assert "rows healed after an interrupted write" in tiles


def test_a_list_counts_and_facets_every_row_and_its_twin_pages_on(client, served):
    """Issue 40 item 4 and 41: the count was capped at 10,000 and the facets counted the first 10,000 rows;
    the JSON twin had neither the facets nor the next page. Now both are aggregates over the whole list, and
    the twin carries `facet_results` (each value's count and toggle address) and `next_url`."""
    every = cli_json(served, "query", "claims", "--study", "*")
    twin = client.get("/search.json?study=*&size=3").json()
    assert twin["count"] == len(every) > 6
    studies = twin["facet_results"]["study"]
    counted = Counter(row["study"] for row in every)
    assert [(v["value"], v["count"]) for v in studies["results"]] == sorted(
        counted.items(), key=lambda i: (-i[1], i[0])
    )[:8]
    assert studies["truncated"] == (len(counted) > 8)
    assert studies["without_value"] == 0
    agents = twin["facet_results"]["agent"]
    assert agents["without_value"] == sum(1 for row in every if row["agent"] is None) > 0
    assert sum(v["count"] for v in agents["results"]) + agents["without_value"] == len(every) or agents["truncated"]
    first = studies["results"][0]
    narrowed = client.get(first["toggle_url"]).json()
    assert first["toggle_url"].startswith("/search.json?")
    assert narrowed["count"] == first["count"]
    assert narrowed["facet_results"]["study"]["results"][0]["selected"]
    assert twin["next_url"] == "/search.json?study=%2A&size=3&page=2"
    second = client.get(twin["next_url"]).json()
    assert second["rows"] == every[3:6]
    last = client.get(f"/search.json?study=*&size=3&page={-(-len(every) // 3)}").json()
    assert last["next_url"] is None
    assert last["rows"] == every[len(every) - len(last["rows"]) :]
    page = client.get("/search?study=*&size=3").text
    assert f'<p class="count">{len(every):,} rows · page 1 of {-(-len(every) // 3):,}</p>' in page


def test_a_path_cell_shows_the_path_relative_and_the_stored_path_on_hover(client):
    """Issue 41: a source file's path reads as `audit` prints it (relative to the working directory), the
    whole stored path in the cell's title."""
    stored = ROOT / "sample_transcripts" / "versant-insights" / "rpc-v1.jsonl"
    shown = stored.relative_to(Path.cwd())
    page = client.get("/search?kind=impact&column=s14r5").text
    assert f'<span class="word" title="{stored}">{shown}</span>' in page
    assert f">{stored}<" not in page
    findings = client.get("/audit").text
    assert f'title="{ROOT}/sample_transcripts/' in findings
    assert '">sample_transcripts/' in findings


def test_a_column_facet_keeps_the_same_name_of_two_sources_apart(client, served):
    """`visits_pw` is a column of two studies' tables: its facet counted them as one value."""
    every = cli_json(served, "query", "claims", "--column", "visits_pw")
    sources = Counter((row["study"], row["source_table"]) for row in every)
    assert len(sources) == 2
    facet = client.get("/search.json?column=visits_pw").json()["facet_results"]["source_column"]["results"]
    assert {(v["filters"]["study"], v["filters"]["table"]): v["count"] for v in facet} == sources
    assert {v["value"] for v in facet} == {"visits_pw"}
    for value in facet:
        study, table = value["filters"]["study"], value["filters"]["table"]
        assert value["label"] == f"visits_pw · {study} / {table}"
        assert client.get(value["toggle_url"]).json()["count"] == value["count"]
    page = client.get("/search?column=visits_pw").text
    for (study, table), n in sources.items():
        assert f'visits_pw · {escape(study)} / {table}</a> <span class="n">{n}</span>' in page


def test_every_list_twin_has_facets_and_a_next_page(client):
    for address in ("/audit.json?size=2", "/verify.json?size=2", "/column/s14r5.json"):
        twin = client.get(address).json()
        for listed in (twin, twin.get("small_bases"), twin.get("conflicts")):
            if listed is None or "rows" not in listed:
                continue
            assert {"count", "next_url", "facet_results", "page", "page_size"} <= set(listed)
    audit = client.get("/audit.json?size=2").json()
    assert audit["next_url"] == "/audit.json?size=2&page=2"
    rules = audit["facet_results"]["rule"]["results"]
    assert sum(v["count"] for v in rules) == audit["count"] or audit["facet_results"]["rule"]["truncated"]
    one = rules[0]
    assert client.get(one["toggle_url"]).json()["count"] == one["count"]


def test_a_conflict_about_a_message_links_the_message_and_the_list_pages(tmp_path, write):
    """Issue 41: a conflicting claim whose result is a message had an empty "result" cell, and the
    conflicts list was one unpaged table."""
    from .transcripts import CITATIONS_MT, citation, jsonrpc_result, v1_task

    cited = [{"data": citation(), "mediaType": CITATIONS_MT}]
    message = {"messageId": "m-says", "role": "ROLE_AGENT", "contextId": "ctx-m", "parts": [{"data": {"total": 4211}}]}
    write("m.jsonl", [jsonrpc_result({"message": {**message, "parts": message["parts"] + cited}})])
    for n, total in enumerate((4210, 4212, 4213)):
        write(f"t{n}.jsonl", [jsonrpc_result(v1_task(f"t-says-{n}", [{"data": {"total": total}}, *cited]))])
    db = str(tmp_path / "archive.duckdb")
    with Archive.open(db) as archive:
        archive.ingest([str(tmp_path / "in")])
        found = [f for f in archive.audit().findings if f.rule == "conflicting-claims"]
    assert "m-says" in {f.message_id for f in found}
    with TestClient(create_app(db), base_url="http://localhost") as own:
        twin = own.get("/column/s14r5.json?size=2").json()["conflicts"]
        assert twin["count"] == len(found) > 2
        assert twin["next_url"] == "/column/s14r5.json?size=2&conflicts_page=2"
        rows = twin["rows"] + own.get(twin["next_url"]).json()["conflicts"]["rows"]
        page = own.get("/column/s14r5?size=50").text
    assert sorted(r["detail"] for r in rows) == sorted(f.detail for f in found)[: len(rows)]
    table = page[page.index("Where agents disagree") :]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)]
    results = [row[0] for row in cells if row]
    assert len(results) == len(found)
    by_message = [r for r in results if r.startswith('<a href="/result/m-says')]
    assert len(by_message) == sum(1 for f in found if f.message_id == "m-says") > 0
    assert "" not in results
    assert f"{len(found)} rows" in table
    assert '<a href="/download/conflicts.csv?column=s14r5" download>csv</a>' in table


def test_verdicts_leave_out_the_columns_no_row_of_the_page_fills(client):
    """On a page of reproduced verdicts "why" and "claimed → re-derived" were two empty columns pushing the
    source and time off-screen at 1,280 px; they are shown where a row of the page has them."""
    for verdict in ("reproduced", "differs"):
        rows = client.get(f"/verify.json?verdict={verdict}").json()["rows"]
        assert rows, verdict
        page = client.get(f"/verify?verdict={verdict}").text
        assert ("<th>why</th>" in page) == any(row["reason"] for row in rows)
        assert ("<th>claimed → re-derived</th>" in page) == any(row["differences"] for row in rows)
    assert "<th>why</th>" in client.get("/verify?verdict=differs").text
    assert "<th>why</th>" not in client.get("/verify?verdict=reproduced").text


def test_a_list_count_and_its_pages_are_grouped_in_thousands(served):
    """ "26129 claims" had no thousands separator; a list's count and its page numbers have."""
    from archiver.serve.data import Page

    templates = create_app(served).server.templates
    count_line = templates.get_template("base.html").module.count_line
    line = str(count_line(Page(("value",), [], 26129, 1234, 10)))
    assert line == '<p class="count">26,129 rows · page 1,234 of 2,613</p>\n'
    assert str(count_line(Page(("value",), [], 1, 1, 50))) == '<p class="count">1 row</p>\n'
