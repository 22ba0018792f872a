"""The three lineage questions as SQL over the archive's views: claims, citations, impact.

Each builder returns a `Query`: SQL text, its bound parameters and the names of
its output fields. Filter values only ever travel as parameters; the ORDER BY
names a field only after it is checked against the query's own fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from .filters import Filters

CITATION_FIELDS = (
    "study",
    "period",
    "fielded",
    "base_name",
    "base_n",
    "weight",
    "source_table",
    "source_column",
    "source_function",
    "warnings",
    "valid",
    "problems",
    "inferred",
)
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
CLAIM_FIELDS = (
    "value",
    "pointer",
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
)
CITATION_INDEX_FIELDS = (*CITATION_FIELDS, "claims", "results", "tasks", "agents", "citation_hash")
IMPACT_FIELDS = ("kind", "id", "claims", "results", "citations")
IMPACT_KINDS = (("task", "task_id"), ("context", "context_id"), ("agent", "agent"), ("source_file", "source_path"))


class QueryError(ValueError):
    """A question the archive cannot answer as asked (an unknown field to order by, ...)."""


@dataclass
class Query:
    sql: str
    params: list
    fields: tuple[str, ...]
    table_fields: tuple[str, ...]  # the columns a person sees in `--format table`


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


def _limit(limit: int | None, params: list) -> str:
    if limit is None:
        return ""
    if limit < 0:
        raise QueryError("--limit must not be negative")
    params.append(int(limit))
    return " LIMIT ?"


def _narrowed(filters: Filters) -> tuple[str, list]:
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
        conditions.append(f"result_key IN (SELECT c.result_key FROM ({_COPIES}) c WHERE {copy_where})")
        params += copy_params
    return " AND ".join(conditions) or "TRUE", params


# Stored copies with their agent: the agent card in the same file, else in the same directory.
_COPIES = """
    SELECT r.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM results r
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = r.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = r.source_dir"""


def claims(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    """The `claim_citations` view's rows that pass the filters.

    Written out rather than read from the view so that filters narrow the claims to the results they
    concern before claims are deduplicated across copies; a result stored once (most are) needs no
    deduplication at all.
    """
    narrowed, params = _narrowed(filters)
    where, outer_params = filters.where()
    params = params * 3 + outer_params
    columns = ", ".join("literal AS value" if f == "value" else f'"{f}"' for f in CLAIM_FIELDS)
    order = _order(
        order_by,
        CLAIM_FIELDS,
        "timestamp NULLS LAST, result_key, content_hash, pointer, citation_hash",
        {"value": "claim_citations.value"},
    )
    sql = f"""
        WITH copies AS MATERIALIZED (
            SELECT c.*, count(*) OVER (PARTITION BY c.result_key) AS stored
            FROM ({_COPIES} WHERE r.claims > 0 AND {narrowed}) c),
        claim_copies AS (
            SELECT cl.value, cl.literal, cl.pointer, p.part_index, cl.content_hash, p.artifact_id,
                   coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, r.agent,
                   r.timestamp, r.source_path, cl.result_key, r.copy_id, cl.part_id, p.ordinal, r.stored
            FROM (SELECT * FROM claims WHERE {narrowed}) cl
            JOIN parts p ON p.part_id = cl.part_id
            JOIN copies r ON r.copy_id = cl.copy_id),
        claim_once AS (
            SELECT * EXCLUDE (ordinal, stored) FROM claim_copies WHERE stored = 1
            UNION ALL
            SELECT * EXCLUDE (ordinal, stored) FROM claim_copies WHERE stored > 1
            QUALIFY row_number() OVER (PARTITION BY result_key, content_hash, pointer
                                       ORDER BY timestamp DESC NULLS LAST, source_path, ordinal) = 1),
        cited AS (
            SELECT result_key, citation_hash,
                   any_value(study) AS study, any_value(period) AS period, any_value(fielded) AS fielded,
                   any_value(base_name) AS base_name, any_value(base_n) AS base_n, any_value(weight) AS weight,
                   any_value(source_table) AS source_table, any_value(source_column) AS source_column,
                   any_value(source_function) AS source_function, any_value(warnings) AS warnings,
                   bool_and(valid) AS valid, any_value(problems) AS problems, bool_or(inferred) AS inferred
            FROM citations WHERE {narrowed} GROUP BY result_key, citation_hash),
        claim_citations AS (
            SELECT k.*, c.citation_hash, c.study, c.period, c.fielded, c.base_name, c.base_n, c.weight,
                   c.source_table, c.source_column, c.source_function, c.warnings, c.valid, c.problems, c.inferred
            FROM claim_once k LEFT JOIN cited c ON c.result_key = k.result_key)
        SELECT {columns}
        FROM (SELECT k.*, {_VERDICT_COLUMNS} FROM claim_citations k {_VERDICT_JOIN}) claim_citations
        WHERE {where} ORDER BY {order}"""
    return Query(
        sql + _limit(limit, params),
        params,
        CLAIM_FIELDS,
        ("value", "pointer", "task_id", "study", "period", "source_column", "base_n", "warnings", "verdict"),
    )


def citations(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    where, params = filters.where("u.")
    picked = ", ".join(
        f"bool_and(u.{f}) AS {f}"
        if f == "valid"
        else f"bool_or(u.{f}) AS {f}"
        if f == "inferred"
        else f"any_value(u.{f}) AS {f}"
        for f in CITATION_FIELDS
    )
    order = _order(order_by, CITATION_INDEX_FIELDS, "study, period, source_column, citation_hash")
    sql = f"""
        WITH uses AS MATERIALIZED (
            SELECT u.* FROM (
                SELECT c.*, r.task_id, r.agent, r.timestamp
                FROM citations c JOIN ({_COPIES}) r ON r.copy_id = c.copy_id) u
            WHERE {where}),
        stored AS (
            SELECT result_key, count(*) AS copies, sum(claims) AS claims FROM results
            WHERE result_key IN (SELECT result_key FROM uses) GROUP BY result_key),
        claim_counts AS (
            SELECT s.result_key, CASE WHEN s.copies = 1 THEN s.claims ELSE coalesce(m.claims, 0) END AS claims
            FROM stored s
            LEFT JOIN (SELECT result_key, count(DISTINCT (content_hash, pointer)) AS claims FROM claims
                       WHERE result_key IN (SELECT result_key FROM stored WHERE copies > 1)
                       GROUP BY result_key) m ON m.result_key = s.result_key),
        citation_claims AS (
            SELECT h.citation_hash, sum(cc.claims) AS claims
            FROM (SELECT DISTINCT citation_hash, result_key FROM uses) h
            JOIN claim_counts cc ON cc.result_key = h.result_key
            GROUP BY h.citation_hash),
        grouped AS (
            SELECT u.citation_hash, {picked}, count(DISTINCT u.result_key) AS results,
                   count(DISTINCT u.task_id) AS tasks, count(DISTINCT u.agent) AS agents
            FROM uses u GROUP BY u.citation_hash)
        SELECT * FROM (
            SELECT {", ".join(f'g."{f}"' for f in CITATION_INDEX_FIELDS[:-5])},
                   coalesce(cc.claims, 0)::BIGINT AS claims, g.results, g.tasks, g.agents, g.citation_hash
            FROM grouped g LEFT JOIN citation_claims cc ON cc.citation_hash = g.citation_hash)
        ORDER BY {order}"""
    return Query(
        sql + _limit(limit, params),
        params,
        CITATION_INDEX_FIELDS,
        ("study", "period", "source_column", "base_n", "claims", "results", "tasks", "agents"),
    )


def impact(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    """Tasks, contexts, agents and source files holding claims that rest on the matching citations.

    A result is affected when any stored copy carries a matching citation; then each of its copies
    that passes the copy filters (agent, task, time) is affected, with the claims it holds. A result
    with one affected copy contributes that copy's count of claims; only results with several are
    deduplicated claim by claim.
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
        FROM (SELECT {column} AS id, count(DISTINCT result_key) AS results,
                     sum(claims) FILTER (WHERE stored = 1) AS single_claims
              FROM affected WHERE {column} IS NOT NULL GROUP BY {column}) a
        LEFT JOIN (SELECT c.{column} AS id, count(DISTINCT (c.result_key, k.content_hash, k.pointer)) AS claims
                   FROM multi_claims k JOIN affected c ON c.copy_id = k.copy_id GROUP BY c.{column}) m ON m.id = a.id
        LEFT JOIN (SELECT c.{column} AS id, count(DISTINCT h.citation_hash) AS citations
                   FROM affected c JOIN hit h ON h.result_key = c.result_key GROUP BY c.{column}) h ON h.id = a.id"""
        for rank, (kind, column) in enumerate(IMPACT_KINDS)
    )
    order = _order(order_by, IMPACT_FIELDS, "kind_rank, claims DESC, id")
    sql = f"""
        WITH hit AS MATERIALIZED (
            SELECT DISTINCT c.result_key, c.citation_hash
            FROM citations c {"" if uses_where == "TRUE" else f"JOIN ({_COPIES}) r ON r.copy_id = c.copy_id"}
            WHERE {cite_where} AND {uses_where}),
        affected AS MATERIALIZED (
            SELECT *, count(*) OVER (PARTITION BY result_key) AS stored FROM (
                SELECT c.copy_id, c.result_key, c.task_id, c.context_id, c.agent, c.source_path, c.claims
                FROM ({_COPIES} WHERE r.result_key IN (SELECT result_key FROM hit)) c
                WHERE {copy_where})),
        multi_claims AS MATERIALIZED (
            SELECT copy_id, content_hash, pointer FROM claims
            WHERE copy_id IN (SELECT copy_id FROM affected WHERE stored > 1))
        SELECT kind, id, claims, results, citations FROM ({dimensions}) ORDER BY {order}"""
    return Query(sql + _limit(limit, params), params, IMPACT_FIELDS, IMPACT_FIELDS)


QUERIES = {"claims": claims, "citations": citations, "impact": impact}
