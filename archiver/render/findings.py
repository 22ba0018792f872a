"""An audit's findings as a `Listing`, which every output format renders (`archiver.render.formats`).

Findings are read from the audit's table batch by batch, so memory holds one batch however many there
are. Their JSON (the format the benchmark times) is written by DuckDB only: one string per finding and
no other Python object, spelt exactly as orjson would spell it around them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..audit.report import FINDING_FIELDS, PUBLISHED_FIELDS
from ..audit.rules import ERROR, RULES_BY_ID
from ..audit.run import ORDER
from ..audit.summary import SUMMARY_FIELDS, cited_figure, summary_rows
from ..query.listing import Chunks, Listing
from .paths import display_path, display_text
from .terminal import counted, printable

if TYPE_CHECKING:
    from ..audit.run import Audit

BATCH_ROWS = 20_000


def listing(audit: Audit, limit: int | None = None) -> Listing:
    """The audit's findings in order (errors first), at most `limit` of them, with its summary and rules;
    read again each time, while the audit (`Archive.audited`) is open. For people, the summary comes first."""
    from ..query.output import QueryRows

    bound = "" if limit is None else f" LIMIT {int(limit)}"
    findings = f"SELECT {', '.join(FINDING_FIELDS)} FROM audit_findings ORDER BY {ORDER}{bound}"
    return Listing(
        PUBLISHED_FIELDS,
        QueryRows(audit.con, findings, own_connection=True),
        spelled=lambda separator, depth: _spelled(audit, _concat(separator, _object(depth)), bound),
        name="findings",
        summary=audit.summary,
        record=_record,
        heading=lambda: summary_text(audit.summary) + "\n",
        footer=lambda: _footer(audit.summary, limit),
        rules=tuple(audit.rules),
    )


def summary_listing(audit: Audit) -> Listing:
    """The audit's counts alone (`audit --summary`): rows by rule, agent and study (`SUMMARY_FIELDS`); for
    people, the summary's text."""
    return Listing(
        SUMMARY_FIELDS,
        summary_rows(audit.con, audit.summary, audit.by_file),
        heading=lambda: summary_text(audit.summary),
        record=lambda row: "",  # every count is in the heading's text
        footer=lambda: "",
    )


def _spelled(audit: Audit, text: str, bound: str) -> Chunks:
    """`text` (an SQL expression over a finding `f`) for each finding in order, in batches."""
    cursor = audit.con.execute(f"SELECT {text} AS text FROM audit_findings f ORDER BY {ORDER}{bound}")
    while rows := cursor.fetchmany(BATCH_ROWS):
        yield len(rows), "".join([row[0] for row in rows]).encode()


def _record(f: dict) -> str:
    """A finding for people: severity, rule and place, then its sentence indented beneath."""
    place = display_path(f["source_path"]) + (f" {f['locator']}" if f["locator"] else "")
    return printable(f"{f['severity'][:7]:<7}  {f['rule'][:20]:<20}  {place}\n         {display_text(f['detail'])}\n")


def _headline(s: dict) -> str:
    counts = s["findings_by_severity"]
    return (
        f"{counted(counts['error'], 'error')}, {counted(counts['warning'], 'warning')} "
        f"in {counted(s['results'], 'result')} ({counted(s['copies'], 'stored copy', 'stored copies')})"
    )


FINDINGS_COUNTED = "findings (each of one stored copy, record or card)"
"""What the summary's findings per rule count: an uncited result stored in 3 files is 3 findings."""


def summary_text(s: dict) -> str:
    """The summary for people: the findings by severity and rule (errors first), the validly cited share
    overall, per agent and per study."""
    by_rule = sorted(s["findings"].items(), key=lambda item: RULES_BY_ID[item[0]].severity != ERROR)
    lines = [
        _headline(s),
        f"{cited_figure(s)}  results cited {s['cited_results']:,}  claims {s['claims']:,} (each counted once)",
        f"{FINDINGS_COUNTED}: " + "  ".join(f"{rule} {count:,}" for rule, count in by_rule),
    ]
    for title, key, name in (("per agent", "per_agent", "agent"), ("per study", "per_study", "study")):
        groups = [g for g in s[key] if g["quantitative_results"]]
        if groups:
            lines.append(
                f"validly cited {title}: "
                + "  ".join(
                    f"{g[name] or '(none)'} {g['validly_cited_results']}/{g['quantitative_results']}" for g in groups
                )
            )
    return "\n".join(lines) + "\n"


def cited_rows(cited: dict) -> list[dict]:
    """The validly cited figure (`Archive.cited`) as rows of `archiver stats` (name, value, what it counts):
    overall, then each agent's and each study's with a quantitative result (its name in the words: they wrap)."""
    rows = [{"name": "validly_cited_results", "value": cited["validly_cited_results"], "counts": cited_figure(cited)}]
    for kind in ("agent", "study"):
        for g in cited[f"per_{kind}"]:
            if g["quantitative_results"]:
                named = f"{g[kind] or f'(no {kind})'}: {cited_figure(g)}"
                rows.append({"name": kind, "value": g["validly_cited_results"], "counts": named})
    return rows


def _footer(s: dict, limit: int | None) -> str:
    """After the findings: the headline again (the summary is above them), and how many were left out."""
    total = sum(s["findings_by_severity"].values())
    shown = f"; the first {limit} shown (--limit)" if limit is not None and limit < total else ""
    return f"\n{_headline(s)}{shown}\n"


class _Sql(str):
    """An SQL expression among the pieces of `_concat` (a plain str there is literal text)."""


def _concat(*pieces: str) -> _Sql:
    """One SQL `concat` of literal text and expressions: one string built per row, not one per `||`."""
    merged: list[str] = []
    for piece in pieces:
        if not isinstance(piece, _Sql) and merged and not isinstance(merged[-1], _Sql):
            merged[-1] += piece
        else:
            merged.append(piece)
    return _Sql(
        "concat(" + ", ".join(p if isinstance(p, _Sql) else "'" + p.replace("'", "''") + "'" for p in merged) + ")"
    )


def _value(name: str) -> _Sql:
    return _Sql(f"json_int(f.{name})" if name == "part_index" else f"json_text(f.{name})")


def _object(depth: int | None) -> _Sql:
    """A finding as a JSON object, indented as orjson indents it `depth` levels down (compact for None)."""
    pieces: list[str] = ["{"]
    for position, name in enumerate(PUBLISHED_FIELDS):
        separator = "," if position else ""
        if depth is None:
            pieces += [f'{separator}"{name}":', _value(name)]
        else:
            pieces += [f'{separator}\n{" " * (2 * depth + 2)}"{name}": ', _value(name)]
    pieces.append("}" if depth is None else "\n" + " " * (2 * depth) + "}")
    return _concat(*pieces)
