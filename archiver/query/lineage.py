"""The three lineage questions as SQL over the archive's views: claims, citations, impact.

Each builder returns a `Query`: SQL text, its bound parameters and the names of
its output fields. Filter values only ever travel as parameters; the ORDER BY
names a field only after it is checked against the query's own fields.
"""
from __future__ import annotations

from dataclasses import dataclass

from .filters import Filters

CITATION_FIELDS = (
    "study", "period", "fielded", "base_name", "base_n", "weight", "source_table", "source_column",
    "source_function", "warnings", "valid", "problems", "inferred",
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
    "value", "pointer", "part_index", "task_id", "message_id", "context_id", "artifact_id", "agent",
    "timestamp", "source_path", *CITATION_FIELDS, "citation_hash", *VERDICT_FIELDS,
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
        terms.append(f'{column} {"DESC" if descending else "ASC"} NULLS LAST')
    return ", ".join(terms) + ", " + default


def _limit(limit: int | None, params: list) -> str:
    if limit is None:
        return ""
    if limit < 0:
        raise QueryError("--limit must not be negative")
    params.append(int(limit))
    return " LIMIT ?"


def claims(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    """The `claim_citations` view's rows that pass the filters.

    Written out rather than read from the view so that citation filters narrow the claims to the
    results they concern before claims are deduplicated across copies (a window over every claim
    in the archive otherwise).
    """
    cite_where, params = filters.where("c.", scope="citation")
    narrowed = "TRUE" if cite_where == "TRUE" else (
        f"result_key IN (SELECT c.result_key FROM citations c WHERE {cite_where})")
    where, outer_params = filters.where()
    params = params * 2 + outer_params
    columns = ", ".join("literal AS value" if f == "value" else f'"{f}"' for f in CLAIM_FIELDS)
    order = _order(order_by, CLAIM_FIELDS, "timestamp NULLS LAST, result_key, content_hash, pointer, citation_hash",
                   {"value": "claim_citations.value"})
    sql = f"""
        WITH claim_copies AS (
            SELECT cl.value, cl.literal, cl.pointer, p.part_index, p.content_hash, p.artifact_id,
                   coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, a.agent,
                   r.timestamp, r.source_path, cl.result_key, r.copy_id, cl.part_id,
                   row_number() OVER (PARTITION BY cl.result_key, p.content_hash, cl.pointer
                                      ORDER BY r.timestamp DESC NULLS LAST, r.source_path, p.ordinal) AS copy_rank
            FROM (SELECT * FROM claims WHERE {narrowed}) cl
            JOIN parts p ON p.part_id = cl.part_id
            JOIN results r ON r.copy_id = cl.copy_id
            JOIN result_agents a ON a.copy_id = cl.copy_id),
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
            FROM claim_copies k LEFT JOIN cited c ON c.result_key = k.result_key
            WHERE k.copy_rank = 1)
        SELECT {columns}
        FROM (SELECT k.*, {_VERDICT_COLUMNS} FROM claim_citations k {_VERDICT_JOIN}) claim_citations
        WHERE {where} ORDER BY {order}"""
    return Query(sql + _limit(limit, params), params, CLAIM_FIELDS,
                 ("value", "pointer", "task_id", "study", "period", "source_column", "base_n", "warnings", "verdict"))


def citations(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    where, params = filters.where("u.")
    picked = ", ".join(
        f"bool_and(u.{f}) AS {f}" if f == "valid" else f"bool_or(u.{f}) AS {f}" if f == "inferred"
        else f"any_value(u.{f}) AS {f}" for f in CITATION_FIELDS
    )
    order = _order(order_by, CITATION_INDEX_FIELDS, "study, period, source_column, citation_hash")
    sql = f"""
        WITH uses AS (SELECT * FROM citation_uses u WHERE {where}),
        claim_counts AS (
            SELECT cl.result_key, count(DISTINCT (p.content_hash, cl.pointer)) AS claims
            FROM claims cl JOIN parts p ON p.part_id = cl.part_id
            WHERE cl.result_key IN (SELECT result_key FROM uses)
            GROUP BY cl.result_key),
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
    return Query(sql + _limit(limit, params), params, CITATION_INDEX_FIELDS,
                 ("study", "period", "source_column", "base_n", "claims", "results", "tasks", "agents"))


def impact(filters: Filters, order_by: str | None = None, limit: int | None = None) -> Query:
    """Tasks, contexts, agents and source files holding claims that rest on the matching citations.

    A result is affected when any stored copy carries a matching citation; then each of its copies
    that passes the copy filters (agent, task, time) is affected, with the claims it holds.
    """
    where, params = filters.where("u.")
    copy_where, copy_params = filters.where("c.", scope="copy")
    params += copy_params
    dimensions = " UNION ALL ".join(
        f"SELECT {rank} AS kind_rank, '{kind}' AS kind, {column} AS id, count(DISTINCT claim_key) AS claims, "
        f"count(DISTINCT result_key) AS results, count(DISTINCT citation_hash) AS citations "
        f"FROM affected WHERE {column} IS NOT NULL GROUP BY {column}"
        for rank, (kind, column) in enumerate(IMPACT_KINDS)
    )
    order = _order(order_by, IMPACT_FIELDS, "kind_rank, claims DESC, id")
    sql = f"""
        WITH hit AS (SELECT DISTINCT u.result_key, u.citation_hash FROM citation_uses u WHERE {where}),
        copies AS (
            SELECT c.* FROM (
                SELECT r.copy_id, r.result_key, r.task_id, r.context_id, a.agent, r.source_path, r.timestamp
                FROM results r JOIN result_agents a ON a.copy_id = r.copy_id
                WHERE r.result_key IN (SELECT result_key FROM hit)) c
            WHERE {copy_where}),
        claim_keys AS (
            SELECT cl.copy_id, (cl.result_key, p.content_hash, cl.pointer) AS claim_key
            FROM claims cl JOIN parts p ON p.part_id = cl.part_id
            WHERE cl.copy_id IN (SELECT copy_id FROM copies)),
        affected AS (
            SELECT c.*, h.citation_hash, k.claim_key FROM copies c
            JOIN hit h ON h.result_key = c.result_key
            LEFT JOIN claim_keys k ON k.copy_id = c.copy_id)
        SELECT kind, id, claims, results, citations FROM ({dimensions}) ORDER BY {order}"""
    return Query(sql + _limit(limit, params), params, IMPACT_FIELDS, IMPACT_FIELDS)


QUERIES = {"claims": claims, "citations": citations, "impact": impact}
