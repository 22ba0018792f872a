"""The three lineage questions as SQL over the archive's views: claims, citations, impact.

Each builder returns a `Query`: SQL text, its bound parameters and the names of
its output fields. Filter values only ever travel as parameters; the ORDER BY
names a field only after it is checked against the query's own fields.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ..errors import QueryError
from ..store import views
from ..store.views import CITATION_FIELDS, CITATION_INDEX_FIELDS
from .selection import Selection

# Each claim's re-run verdict (`archiver verify`), from its citation's latest verification: a claim
# that a `differs` verdict found equal is `reproduced`; `rerun_value` is what the data layer re-derived
# where it differs.
VERDICT_FIELDS = ("verdict", "rerun_value", "verdict_reason", "verified_at")
_VERDICT_COLUMNS = """
    CASE WHEN v.verdict = 'differs' AND NOT list_contains(
              json_extract_string(v.differences, '$[*].pointer'), k.pointer) THEN 'reproduced'
         ELSE v.verdict END AS verdict,
    TRY_CAST(json_extract_string(list_filter(CAST(v.differences AS JSON[]),
                                             d -> json_extract_string(d, '$.pointer') = k.pointer)[1],
                                 '$.rerun') AS DOUBLE) AS rerun_value,
    v.reason AS verdict_reason, v.verified_at"""
_VERDICT_JOIN = "LEFT JOIN latest_verdicts v ON v.result_key = k.result_key AND v.citation_hash = k.citation_hash"


def status_sql(verdict: str | None = "verdict") -> str:
    """What is wrong with a citation, in a word or two, for the tables people read: `uncited`, `invalid:`
    and its first problem, `type lost` (recognised by its fields, its media type lost), or `valid`; and
    after a comma the latest verdict of its re-run (`verdict`: the column holding it; None: none)."""
    said = f" || coalesce(', ' || {verdict}, '')" if verdict else ""
    return f"""(CASE WHEN citation_hash IS NULL THEN 'uncited'
            WHEN NOT valid THEN 'invalid: ' || coalesce(problems[1], 'invalid')
            WHEN inferred THEN 'type lost' ELSE 'valid' END{said})"""


CLAIM_FIELDS = (
    "value",
    "unit",
    "stated",
    "pointer",
    "cell",
    "part_index",
    "task_id",
    "message_id",
    "context_id",
    "artifact_id",
    "agent",
    "timestamp",
    "source_path",
    *CITATION_FIELDS,
    "citation_hash",
    *VERDICT_FIELDS,
    "status",
)
IMPACT_FIELDS = ("kind", "id", "claims", "results", "citations")
IMPACT_KINDS = (("task", "task_id"), ("context", "context_id"), ("agent", "agent"), ("source_file", "source_path"))


@dataclass
class Query:
    sql: str
    params: list
    fields: tuple[str, ...]
    table_fields: tuple[str, ...]  # the columns a person sees in `--format table`
    windowed: str | None = None
    """The same rows with `{window}` where a LIMIT and OFFSET go before what only the rows shown need (a page's
    verdicts, `claims`); None: a window goes after the whole query."""
    weighted: str | None = None
    """The same rows as fewer, weighted ones (`weight`: how many rows each stands for, with every column a count or
    facet groups by), with `{cells}` where the kept cited cells go (`store.cells.source`), and the same parameters:
    what a page's count and facets are summed from (`claims` chosen by a citation's fields and the agent alone);
    None: they are counted over the rows."""


def _order(order_by: str | None, fields: tuple[str, ...], default: str, columns: dict[str, str] | None = None) -> str:
    """`field`, `-field` or `field desc`, comma-separated, each checked against the output's fields."""
    if not order_by:
        return default
    terms = []
    for term in order_by.split(","):
        words = term.strip().split()
        descending = bool(words) and words[0].startswith("-")
        name = words[0].lstrip("-") if words else ""
        if len(words) == 2 and words[1].lower() in ("asc", "desc"):
            descending = words[1].lower() == "desc"
        elif len(words) != 1:
            raise QueryError(f"cannot order by {term.strip()!r}: give a field, -field or 'field desc'")
        if name not in fields:
            raise QueryError(f"cannot order by {name!r}; fields: {', '.join(fields)}")
        column = (columns or {}).get(name, f'"{name}"')
        terms.append(f"{column} {'DESC' if descending else 'ASC'} NULLS LAST")
    return ", ".join(terms) + ", " + default


# The columns a person sees in `--format table` on a terminal.
CLAIM_TABLE_FIELDS = (
    *("value", "unit", "pointer", "task_id", "study", "period", "source_column", "base_n", "warnings", "status"),
)
CITATION_TABLE_FIELDS = ("study", "period", "source_column", "base_n", "status", "claims", "results", "tasks", "agents")


def _query(sql: str, params: list, limit: int | None, fields: tuple[str, ...], table_fields: tuple[str, ...]) -> Query:
    return Query(sql + _limit(limit, params), params, fields, table_fields)


def _limit(limit: int | None, params: list) -> str:
    if limit is None:
        return ""
    if limit < 0:
        raise QueryError("--limit must not be negative")
    params.append(min(int(limit), MOST_ROWS))  # more than any table can hold is all of them
    return " LIMIT ?"


MOST_ROWS = 2**63 - 1
"""The largest LIMIT DuckDB takes."""


def narrowed(filters: Selection) -> tuple[str, list]:
    """A condition on `result_key` that keeps every result whose claims can pass the filters.

    Citations are a result's (every copy rests on the citations of all its copies); agent, task and
    time describe one copy, so a result passes when some copy of it does. Claims are deduplicated
    across copies only after this narrowing, over the results it keeps.
    """
    conditions, params = [], []
    cite_where, cite_params = filters.where("c.", scope="citation")
    if cite_where != "TRUE":
        conditions.append(f"result_key IN (SELECT c.result_key FROM citations c WHERE {cite_where})")
        params += cite_params
    copy_where, copy_params = filters.where("c.", scope="copy")
    if copy_where != "TRUE":
        conditions.append(f"result_key IN (SELECT c.result_key FROM ({views.copies()}) c WHERE {copy_where})")
        params += copy_params
    return " AND ".join(conditions) or "TRUE", params


def claims(filters: Selection, order_by: str | None = None, limit: int | None = None) -> Query:
    """The claims counted once (the `claim_citations` view: the kept claim index, `store.kept`) that pass the
    filters, with each claim's re-run verdict."""
    where, params = filters.where()
    computed = {"value": "literal AS value", "status": f"{status_sql()} AS status"}
    columns = ", ".join(computed.get(f, f'"{f}"') for f in CLAIM_FIELDS)
    order = _order(
        order_by,
        CLAIM_FIELDS,
        "timestamp NULLS LAST, result_key, content_hash, pointer, citation_hash",
        {"value": "claim_citations.value"},
    )
    sql = f"""
        SELECT {columns}
        FROM (SELECT k.*, {_VERDICT_COLUMNS} FROM claim_citations k {_VERDICT_JOIN}) claim_citations
        WHERE {where} ORDER BY {order}"""
    query = _query(sql, params, limit, CLAIM_FIELDS, CLAIM_TABLE_FIELDS)
    if limit is None and filters.chooses_citations() and _by_cells(filters):
        query.weighted = f"SELECT *, claims AS weight FROM {{cells}} WHERE {where}"
    if limit is None and not any(name in order for name in (*VERDICT_FIELDS, '"status"')):
        chosen = f"SELECT * FROM claim_citations WHERE {where} ORDER BY {order} {{window}}"
        query.windowed = f"""
        SELECT {columns}
        FROM (SELECT k.*, {_VERDICT_COLUMNS} FROM ({chosen}) k {_VERDICT_JOIN}) claim_citations ORDER BY {order}"""
    return query


CELL_FILTERS = frozenset(
    {"study", "period", "column", "table", "function", "agent", "min_n", "max_n", "valid", "inferred"}
)
"""The filters whose columns the kept cited cells hold (`store.cells.KEYS`): a cited claim passes them as its cell
does."""


def _by_cells(filters: Selection) -> bool:
    """Whether `filters` chooses whole cited cells: it sets no filter but `CELL_FILTERS`."""
    rest = {f.name: None for f in fields(filters) if f.name in CELL_FILTERS}
    return replace(filters, **rest).where()[0] == "TRUE"


def citations(
    filters: Selection, order_by: str | None = None, limit: int | None = None, condition: str = "TRUE"
) -> Query:
    """The `citation_index` view's rows whose citation Parts pass the filters (and `condition`, SQL over a citation
    Part's own columns, as `u`): the Parts chosen by their own fields before their copies are read."""
    parts, params = filters.where("u.", scope="citation")
    parts = parts if condition == "TRUE" else f"{parts} AND {condition}"
    where, copy_params = filters.where("u.", scope="copy")
    order = _order(order_by, CITATION_INDEX_FIELDS, "study, period, source_column, citation_hash")
    index = views.citation_index(where, parts)
    sql = f"SELECT *, {status_sql(None)} AS status FROM ({index}) ORDER BY {order}"
    return _query(sql, params + copy_params, limit, (*CITATION_INDEX_FIELDS, "status"), CITATION_TABLE_FIELDS)


def impact(filters: Selection, order_by: str | None = None, limit: int | None = None) -> Query:
    """Tasks, contexts, agents and source files holding claims that rest on the matching citations.

    A result is affected when any stored copy carries a matching citation; then each of its copies
    that passes the copy filters (agent, task, time) is affected, with the claims it holds. A result
    with one affected copy contributes that copy's count of claims (and is one result of each of its
    dimensions, counted without a DISTINCT); only results with several are deduplicated claim by claim.
    """
    cite_where, params = filters.where("c.", scope="citation")
    uses_where, uses_params = filters.where("r.", scope="copy")
    copy_where, copy_params = filters.where("c.", scope="copy")
    params += uses_params + copy_params
    dimensions = " UNION ALL ".join(
        f"""
        SELECT {rank} AS kind_rank, '{kind}' AS kind, a.id,
               CAST(coalesce(a.single_claims, 0) + coalesce(m.claims, 0) AS BIGINT) AS claims,
               a.results, coalesce(h.citations, 0) AS citations
        FROM (SELECT {column} AS id,
                     count(*) FILTER (WHERE stored = 1)
                     + count(DISTINCT result_key) FILTER (WHERE stored > 1) AS results,
                     sum(claims) FILTER (WHERE stored = 1) AS single_claims
              FROM affected WHERE {column} IS NOT NULL GROUP BY {column}) a
        LEFT JOIN (SELECT {column} AS id, count(DISTINCT (result_key, content_hash, pointer)) AS claims
                   FROM multi_claims GROUP BY {column}) m ON m.id = a.id
        LEFT JOIN (SELECT {column} AS id, count(DISTINCT citation_hash) AS citations
                   FROM affected_hits GROUP BY {column}) h ON h.id = a.id"""
        for rank, (kind, column) in enumerate(IMPACT_KINDS)
    )
    order = _order(order_by, IMPACT_FIELDS, "kind_rank, claims DESC, id")
    ids = ", ".join(f"c.{column}" for _, column in IMPACT_KINDS)  # each affected copy's, met once for all four
    sql = f"""
        WITH hit AS MATERIALIZED (
            SELECT DISTINCT c.result_key, c.citation_hash
            FROM citations c {"" if uses_where == "TRUE" else f"JOIN ({views.copies()}) r ON r.copy_id = c.copy_id"}
            WHERE {cite_where} AND {uses_where}),
        affected AS MATERIALIZED (
            SELECT *, count(*) OVER (PARTITION BY result_key) AS stored FROM (
                SELECT c.copy_id, c.result_key, c.task_id, c.context_id, c.agent, c.source_path, c.claims
                FROM ({views.copies("r.result_key IN (SELECT result_key FROM hit)")}) c
                WHERE {copy_where})),
        affected_hits AS MATERIALIZED (
            SELECT {ids}, h.citation_hash FROM affected c JOIN hit h ON h.result_key = c.result_key),
        multi_claims AS MATERIALIZED (
            SELECT {ids}, c.result_key, k.content_hash, k.pointer
            FROM (SELECT * FROM affected WHERE stored > 1) c
            JOIN (SELECT copy_id, content_hash, pointer FROM claims
                  WHERE copy_id IN (SELECT copy_id FROM affected WHERE stored > 1)) k ON k.copy_id = c.copy_id)
        SELECT kind, id, claims, results, citations FROM ({dimensions}) ORDER BY {order}"""
    return _query(sql, params, limit, IMPACT_FIELDS, IMPACT_FIELDS)


QUERIES = {"claims": claims, "citations": citations, "impact": impact}
