"""The pages: each asks the archive once and returns what it shows (`Shown`): the data, which is its
JSON twin, and what the HTML page adds to it (the table as people read it, facets, charts, the form).
Which of the two is sent is the renderers' business (`renderers`), errors the application's (`app`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from ..audit.report import PUBLISHED_FIELDS
from ..audit.rules import ERROR, RULES_BY_ID, WARNING
from ..audit.summary import cited_figure, percent
from ..errors import UsageError
from ..query.lineage import QUERIES
from ..query.listing import Listing
from ..query.selection import Selection
from ..query.transcript import NotFoundError
from ..render.html import result_html
from ..render.jsontext import results_document
from ..verify.run import VERDICTS
from .charts import quantity_panels, stacked_bars
from .data import (
    CHART_CELLS,
    CONFLICT_FIELDS,
    FINDING_FILTERS,
    PAGE_SIZE,
    SMALL_FIELDS,
    SUBJECTS,
    VERDICT_FIELDS,
    Page,
    by_period,
    cited_values,
    conflict_rows,
    conflicts_page,
    findings_page,
    findings_per_day,
    findings_rows,
    lineage_page,
    page_bounds,
    page_of,
    small_base_rows,
    small_bases,
    verdict_counts,
    verdict_rows,
    verdicts_page,
    verdicts_per_day,
)
from .downloads import DOWNLOADS, download, sent
from .form import fields as form_fields
from .form import selection as selection_from
from .quantities import QUANTITY_FIELDS, periods_of, quantity_rows, series_of
from .tables import FACETS, Facet, Grid, facet_list, grid
from .urls import as_twin, changed, day_query, encoded, href, wanted


@dataclass
class Shown:
    """What a page shows: `twin`, its data (sent as is as JSON), and `context`, what its HTML adds."""

    template: str
    title: str
    twin: dict
    context: dict = field(default_factory=dict)
    linked: bool = True  # the HTML page links to its JSON twin (an error's does not)

    @property
    def cookies(self) -> dict[str, str]:
        """The choices of columns its lists keep for the next visit (`tables.remembered`)."""
        return dict(g.remember for g in self.context.values() if isinstance(g, Grid) and g.remember)


def ask(server, archive, question: tuple, make):
    """`make()`, the answer to `question`, asked once per state of the archive. The question holds the
    values a page read from its address (the parameters it knows, parsed and bounded), never the query
    string itself: parameters a page does not know change nothing, and a page and its `.json` twin
    share the answer."""
    return server.remembered(archive, question, make)


def overview(server, request) -> Shown:
    with server.archive() as archive:
        snap = server.snapshots.get(archive)
        verdicts = verdict_counts(archive.con)
        per_day = ask(server, archive, ("per_day",), lambda: findings_per_day(archive.con, snap))
    summary = snap.summary
    twin = {
        "stats": snap.stats,
        "findings": summary["findings"],
        "findings_by_severity": summary["findings_by_severity"],
        "verdicts": verdicts,
        "results_per_day": snap.results_per_day,
        "most_cited": snap.subjects,
        "findings_per_day": per_day,
        "audit_summary": summary,
    }
    results_chart = stacked_bars(
        snap.results_per_day,
        "day",
        "agent",
        "results",
        lambda day, agent: "/search" + encoded(day_query(day, agent=agent if agent != "(no agent)" else "")),
        "Results per day, by agent",
    )
    findings_chart = stacked_bars(
        per_day,
        "day",
        "rule",
        "findings",
        lambda day, rule: "/audit" + encoded(day_query(day, rule=rule)),
        "Findings per day, by rule",
    )
    context = {
        "charts": [Markup(results_chart), Markup(findings_chart)],
        "figure": cited_figure(summary),
        "cited_by": {kind: cited_rows(summary, kind) for kind in ("agent", "study")},
        "counts_first": {name: snap.stats[name] for name in COUNTS_FIRST if name in snap.stats},
        "counts_more": {name: value for name, value in snap.stats.items() if name not in COUNTS_FIRST},
    }
    return Shown("overview.html", "Overview", twin, context)


COUNTS_FIRST = ("results", "copies", "claims", "citations", "sources", "quarantined")
"""The overview's counts shown beside the headline; the others are under "more counts"."""


def subject_figure(summary: dict, kind: str, name: str) -> dict:
    """An agent's or a study's validly cited figure, as the audit's summary counts it (none stated: 0 of 0)."""
    found = [group for group in summary[f"per_{kind}"] if group[kind] == name]
    if found:
        return {key: found[0][key] for key in ("quantitative_results", "validly_cited_results", "validly_cited_share")}
    return {"quantitative_results": 0, "validly_cited_results": 0, "validly_cited_share": None}


def cited_rows(summary: dict, kind: str) -> list[dict]:
    """The validly cited figure of each agent or study (`kind`) with a quantitative result, as the overview's
    table shows it: a study of none is the results that cite no study."""
    return [
        {"name": group[kind], "cited": group["validly_cited_results"], "of": group["quantitative_results"],
         "share": percent(group["validly_cited_share"])}
        for group in summary[f"per_{kind}"]
        if group["quantitative_results"]
    ]  # fmt: skip


def search(server, request) -> Shown:
    kind = request.query_params.get("kind") or "claims"
    if kind not in QUERIES:
        raise UsageError(f"kind is one of {', '.join(QUERIES)}", "kind")
    selection = selection_from(request.query_params)
    order_by = request.query_params.get("order_by") or None
    page, size = _page(request)
    unfiltered = selection == Selection()  # the whole archive is the overview's; a list of it reads every claim
    if unfiltered:
        found = Page(QUERIES[kind](selection).fields, [], 0, 1, size)
    else:
        with server.archive() as archive:
            found = ask(
                server,
                archive,
                ("rows", kind, repr(selection), order_by, page, size),
                lambda: lineage_page(archive.con, kind, selection, order_by, page, size, FACETS[kind]),
            )
    facets = facet_list(request, found)
    twin = {
        "kind": kind,
        "filters": selection.as_dict(),
        "order_by": order_by,
        "needs_filter": unfiltered,  # no rows: a search without a filter lists nothing
        **listed(request, found, facets),
    }
    context = {
        "kind": kind,
        "kinds": list(QUERIES),
        "fields": form_fields(request.query_params),
        "order_by": order_by or "",
        "found": found,
        "unfiltered": unfiltered,
        "pager": _pager(request, found),
        "grid": grid(request, kind, found.fields, found.rows, sortable=True),
        "facets": facets,
        "downloads": _downloads(request, kind),
    }
    return Shown("search.html", f"Search {kind}", twin, context)


def listed(request, found: Page, facets: list[Facet] = (), parameter: str = "page") -> dict:
    """A list as a JSON twin holds it: its page of rows, its exact `count`, `next_url` (the twin of its
    next page; None on the last) and `facet_results` (Datasette's: each facet's values, counts and the
    address that toggles each)."""
    following = _pager(request, found, parameter)["next"]
    return {
        **found.as_dict(),
        "next_url": as_twin(following) if following else None,
        "facet_results": {facet.name: facet.as_dict(as_twin) for facet in facets},
    }


def _downloads(request, kind: str, **query: str) -> list[tuple[str, str]]:
    """(format, address) of the whole list `kind` the page shows, in every format of `DOWNLOADS`."""
    return [
        (f, changed(request, drop=("page", "size", "kind", "_col"), path=f"/download/{kind}.{f}", **query))
        for f in DOWNLOADS
    ]


def result(server, request) -> Shown:
    ident = _name(request, "ident")
    copy = request.query_params.get("copy") or None
    with server.archive() as archive:
        results = ask(server, archive, ("results", ident, copy), lambda: archive.results(ident, copy))
        twin = ask(server, archive, ("result", ident, copy), lambda: results_document(ident, results))
        laid_out = None  # the transcripts as `show` lays them out: for the HTML page only, never for its twin
        if wanted(request) == "html":
            linked = copy_link(ident)
            question = ("laid out", ident, copy)
            laid_out = ask(server, archive, question, lambda: [result_html(r, linked) for r in results])
    subjects = []
    for view in results:
        links = [("agent", view.agent)] if view.agent else []
        for c in view.citations:
            links += [("study", c.study), ("period", c.period), ("column", c.source_column), ("table", c.source_table)]
        subjects.append([(kind, name) for kind, name in dict.fromkeys(links) if name])
    shown = [(Markup(html), links, view) for html, links, view in zip(laid_out or [], subjects, results, strict=False)]
    return Shown("result.html", f"Result {ident}", twin, {"shown": shown})


def copy_link(ident: str):
    """The address of the result `ident` as one of its stored copies shows it (`?copy=PATH`, as `show --copy`)."""
    return lambda path: href("result", ident, copy=path)


def subject(server, request) -> Shown:
    kind = request.url.path.split("/")[1]
    name = _name(request, "name")
    selection = Selection.of(**{SUBJECTS[kind]: [name]})
    (small_at, size), (conflicts_at, _), (quantities_at, _) = (
        _page(request, f"{list_}_page") for list_ in ("small", "conflicts", "quantities")
    )
    with server.archive() as archive:
        periods = ask(server, archive, ("periods", kind, name), lambda: by_period(archive.con, selection))
        small = ask(
            server,
            archive,
            ("small", kind, name, small_at, size),
            lambda: small_bases(archive.con, selection, small_at, size),
        )
        charts, quantities, partial = ask(
            server, archive, ("claimed", kind, name), lambda: claimed(archive.con, selection, kind, name)
        )
        shown = list(charts)
        per_day = verdicts = disagreeing = figure = None
        if kind in ("agent", "study"):
            figure = subject_figure(server.snapshots.get(archive).summary, kind, name)
        if kind == "column":
            snap = server.snapshots.get(archive)
            disagreeing = ask(
                server,
                archive,
                ("conflicts", name, conflicts_at, size),
                lambda: conflicts_page(archive.con, snap, name, conflicts_at, size),
            )
        if kind == "agent":
            snap = server.snapshots.get(archive)
            per_day = ask(server, archive, ("per_day", name), lambda: findings_per_day(archive.con, snap, name))
            verdicts = ask(server, archive, ("verdicts_per_day", name), lambda: verdicts_per_day(archive.con, name))
    twin = {
        "kind": kind,
        "name": name,
        "by_period": periods,
        "quantities": quantities,
        "quantities_capped": partial,
        "small_bases": listed(request, small, parameter="small_page"),
    }
    if figure is not None:
        twin["validly_cited"] = figure
    if disagreeing is not None:
        twin["conflicts"] = listed(request, disagreeing, parameter="conflicts_page")
    if per_day is not None:
        twin |= {"findings_per_day": per_day, "verdicts_per_day": verdicts}
        shown.append(
            stacked_bars(
                per_day,
                "day",
                "rule",
                "findings",
                lambda day, rule: "/audit" + encoded(day_query(day, rule=rule, agent=name)),
                "Findings per day, by rule",
            )
        )
        shown.append(
            stacked_bars(
                verdicts,
                "day",
                "verdict",
                "verdicts",
                lambda day, verdict: "/verify" + encoded({"agent": name, "verdict": verdict}),
                "Verdicts per day",
            )
        )
    quantity_page = page_of(QUANTITY_FIELDS, quantities, quantities_at, size)
    context = {
        "kind": kind,
        "name": name,
        "figure": cited_figure(figure) if figure else None,
        "periods": periods,
        "quantities": quantity_page,
        "quantities_capped": partial,
        "quantities_pager": _pager(request, quantity_page, "quantities_page"),
        "chart_cells": CHART_CELLS,
        "charts": [Markup(chart) for chart in shown],
        "small": small,
        "small_grid": grid(request, "small", small.fields, small.rows),
        "small_pager": _pager(request, small, "small_page"),
        "small_downloads": _subject_downloads("small", SUBJECTS[kind], name),
        "conflicts": disagreeing,
        "conflicts_grid": grid(request, "conflicts", disagreeing.fields, disagreeing.rows) if disagreeing else None,
        "conflicts_pager": _pager(request, disagreeing, "conflicts_page") if disagreeing else None,
        "conflict_downloads": _subject_downloads("conflicts", "column", name),
        "search": "/search" + encoded({SUBJECTS[kind]: name}),
        "audit": "/audit" + encoded({"agent": name}) if kind == "agent" else None,
        "verify": "/verify" + encoded({"agent": name}) if kind == "agent" else None,
    }
    return Shown("subject.html", f"{kind} {name}", twin, context)


def _subject_downloads(kind: str, parameter: str, name: str) -> list[tuple[str, str]]:
    """(format, address) of a subject's list `kind` (its small bases, a column's conflicts) as a file."""
    return [(f, f"/download/{kind}.{f}" + encoded({parameter: name})) for f in DOWNLOADS]


def claimed(con, selection: Selection, kind: str, name: str) -> tuple[list[str], list[dict], bool]:
    """What a subject's claims state, read once and kept with the page's other answers: its charts
    (`claimed_charts`), every row of its quantities table (`quantity_rows`) and whether the cells were capped."""
    cells, partial = cited_values(con, selection)
    return claimed_charts(cells, partial, kind, name), quantity_rows(cells), partial


def claimed_charts(cells: list[dict], partial: bool, kind: str, name: str) -> list[str]:
    """A subject's charts of what was claimed, by period (`quantity_panels`), from its `cited_values`."""
    series, bases = series_of(cells)
    title = "What was claimed, by period" + (f" (its first {CHART_CELLS:,} cells)" if partial else "")
    return quantity_panels(
        series,
        periods_of(cells),
        bases,
        lambda period: "/search" + encoded({SUBJECTS[kind]: name, "period": period}),
        title,
    )


def _audit_filters(params) -> tuple[list[str], str | None, Selection]:
    """The rules, severity and selection of `/audit` and its downloads."""
    rules = [r for r in params.getlist("rule") if r]
    for rule in rules:
        _known(rule, RULES_BY_ID, "rule")
    severity = params.get("severity") or None
    if severity is not None:
        _known(severity, (ERROR, WARNING), "severity")
    return rules, severity, selection_from(params, only=FINDING_FILTERS)


def audit(server, request) -> Shown:
    params = request.query_params
    rules, severity, selection = _audit_filters(params)
    page, size = _page(request)
    with server.archive() as archive:
        snap = server.snapshots.get(archive)
        found = ask(
            server,
            archive,
            ("findings", tuple(rules), severity, repr(selection), page, size),
            lambda: findings_page(archive.con, snap, rules, severity, selection, page, size, FACETS["findings"]),
        )
    facets = facet_list(request, found)
    twin = {"filters": {"rule": rules, "severity": severity, **selection.as_dict()}, **listed(request, found, facets)}
    context = {
        "found": found,
        "pager": _pager(request, found),
        "rules": list(snap.summary["findings"]),
        "chosen": rules,
        "severity": severity,
        "fields": form_fields(params, only=FINDING_FILTERS),
        "summary": snap.summary,
        "grid": grid(request, "findings", found.fields, found.rows),
        "facets": facets,
        "downloads": _downloads(request, "audit"),
    }
    return Shown("audit.html", "Audit findings", twin, context)


def _verify_filters(params) -> tuple[str | None, Selection]:
    """The verdict and selection of `/verify` and its downloads."""
    verdict = params.get("verdict") or None
    if verdict is not None:
        _known(verdict, VERDICTS, "verdict")
    return verdict, selection_from(params)


def verify(server, request) -> Shown:
    params = request.query_params
    verdict, selection = _verify_filters(params)
    page, size = _page(request)
    with server.archive() as archive:
        found = ask(
            server,
            archive,
            ("verdicts", repr(selection), verdict, page, size),
            lambda: verdicts_page(archive.con, selection, verdict, page, size),
        )
        counts = verdict_counts(archive.con)
    twin = {
        "filters": {"verdict": verdict, **selection.as_dict()},
        "verdicts_by_status": counts,
        **listed(request, found),
    }
    context = {
        "found": found,
        "pager": _pager(request, found),
        "counts": counts,
        "verdicts": VERDICTS,
        "verdict": verdict,
        "fields": form_fields(params),
        "downloads": _downloads(request, "verify"),
    }
    return Shown("verify.html", "Verdicts", twin, context)


def downloaded(server, request):
    """A list's whole rows as a file (`downloads`): a search's, the audit's findings, the verdicts, or the
    conflicts about a column (`?column=`); a response of its own, not a page."""
    kind, _, fmt_ = request.path_params["file"].partition(".")
    if kind not in (*QUERIES, *LISTS) or fmt_ not in DOWNLOADS:
        raise NotFoundError(
            f"no list {request.path_params['file']}: {', '.join((*QUERIES, *LISTS))} as {', '.join(DOWNLOADS)}"
        )
    params = request.query_params
    with server.archive() as archive:
        if kind in QUERIES:
            return download(archive, kind, fmt_, selection_from(params), params.get("order_by") or None)
        return sent(Listing(LISTS[kind], _rows_of(server, archive, kind, params)), kind, fmt_)


LISTS = {"audit": PUBLISHED_FIELDS, "verify": VERDICT_FIELDS, "conflicts": CONFLICT_FIELDS, "small": SMALL_FIELDS}
"""The other lists a page shows whole as a download, and their fields."""


def _rows_of(server, archive, kind: str, params) -> list[dict]:
    if kind == "verify":
        verdict, selection = _verify_filters(params)
        return verdict_rows(archive.con, selection, verdict)
    if kind == "small":
        return small_base_rows(archive.con, selection_from(params))
    snap = server.snapshots.get(archive)
    if kind == "audit":
        return findings_rows(archive.con, snap, *_audit_filters(params))
    return conflict_rows(archive.con, snap, params.get("column") or "")


PAGES = {
    "/": overview,
    "/search": search,
    "/audit": audit,
    "/verify": verify,
    "/result/{ident:path}": result,
    **{f"/{kind}/{{name:path}}": subject for kind in SUBJECTS},
}
"""Each page's address (with `.json`, its twin)."""


# What a page reads from its address.


def _name(request, key: str) -> str:
    name = request.path_params[key]
    return name[: -len(".json")] if name.endswith(".json") else name


def _page(request, parameter: str = "page") -> tuple[int, int]:
    """The page (`parameter`) and its size asked for, brought within their bounds (`page_bounds`)."""
    page, size = (_whole(request, name, default) for name, default in ((parameter, 1), ("size", PAGE_SIZE)))
    return page_bounds(page, size)


def _whole(request, name: str, default: int) -> int:
    given = request.query_params.get(name) or default
    try:
        return int(given)
    except ValueError:
        shown = given if len(given) <= 40 else given[:40] + "…"
        raise UsageError(f"{shown!r} is not a whole number", name) from None


def _known(value: str, known, parameter: str) -> None:
    if value not in known:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise UsageError(f"{shown!r} is not one of {', '.join(known)}", parameter)


def _pager(request, found: Page, parameter: str = "page") -> dict:
    """The addresses of a list's previous and next pages (None where there is none); `parameter` names
    its page where a page shows two lists."""
    return {
        "previous": changed(request, **{parameter: found.page - 1}) if found.page > 1 else None,
        "next": changed(request, **{parameter: found.page + 1}) if found.page < found.pages else None,
    }
