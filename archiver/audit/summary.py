"""The audit summary's counts, over the stored copies in scope.

A result is *quantitative* when a copy of it states a number (a claim). It is
*cited* when a copy holds a citation Part, typed or probable, and *validly
cited* when it holds at least one and every citation Part it holds is valid and
typed (a citation whose media type was lost is no valid citation: consumers
cannot recognise it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import audit_sums
from ..store.connection import temporary_view
from ..store.views import copy_unit, with_agent

if TYPE_CHECKING:
    import duckdb

# A copy's agent is its file's (`views.with_agent`: a card in the same file, else in the same directory), so it is
# looked up once per file (of the files holding a chosen result, `{files}`), from the file alone: through
# `result_agents`, every copy's agent was found before a file's was chosen (0.5-0.8 s at 100M claims).
FILE_AGENTS = f"""
CREATE OR REPLACE TEMP TABLE audit_file_agents AS
SELECT source_path, agent
FROM ({with_agent("SELECT source_path, any_value(source_dir) AS source_dir FROM results WHERE {files} GROUP BY ALL")})
"""

# Whether every value of `x` among a group's rows in scope is the same (NULL included).
_ONE = (
    "(min({x}) FILTER (WHERE scoped) IS NOT DISTINCT FROM max({x}) FILTER (WHERE scoped) "
    "AND (bool_and({x} IS NULL) FILTER (WHERE scoped) OR NOT bool_or({x} IS NULL) FILTER (WHERE scoped)))"
)

# How many copies (`copy_unit`) each result has, `copies_all`, and in scope, `copies`: a copy that is no
# origin copy is one of its own (a copy_id is stored once: `archiver db check`'s duplicate-copy), so it
# is counted as a row; only the segments of origin copies are told apart, apart from the rest (a DISTINCT
# over every copy, even one filtered to none, costs most of the query).
_ORIGIN_UNITS = f"""
    SELECT r.result_key, count(DISTINCT {copy_unit()}) AS copies_all,
           count(DISTINCT {copy_unit()}) FILTER (WHERE audit_copy_in_scope(r.copy_id)) AS copies
    FROM results r WHERE r.origin IS NOT NULL AND {{chosen}} GROUP BY r.result_key"""

# One row per result of the archive: how many copies it has, whether one is terminal and whether
# one holds a citation (what the rules judge by); and over its copies in scope (none: `copies`
# 0, left out of the counts): whether it is quantitative, cited, validly cited, its claims (a copy
# counts its distinct claims; a result stored several times, those of its copies told apart by Part
# content and pointer), and its agent and study when it has a single one (no citation: study NULL), else
# a flag and the list of them. Of the results `{chosen}` chooses (a condition on `result_key`; TRUE:
# all): each result's row is made from its own copies alone. The lists are made only for the results of
# several (a list per result of the whole archive held 512 MB at 960,000 results, and a list aggregate
# does not spill: a filtered audit of 10M claims ran out of memory).
RESULT_STATUS = f"""
CREATE OR REPLACE TEMP TABLE audit_result_status AS
WITH cited AS MATERIALIZED (
    SELECT result_key, bool_or(scoped) AS cited, bool_and(valid AND NOT inferred) FILTER (WHERE scoped) AS valid,
           min(study) FILTER (WHERE scoped) AS study, {_ONE.format(x="study")} AS one_study
    FROM (SELECT *, audit_copy_in_scope(copy_id) AS scoped FROM citations WHERE {{chosen}})
    GROUP BY result_key
),
studied AS (
    SELECT result_key, list_sort(list(DISTINCT study)) AS studies
    FROM citations
    WHERE {{chosen}} AND result_key IN (SELECT result_key FROM cited WHERE NOT one_study)
      AND audit_copy_in_scope(copy_id)
    GROUP BY result_key
),
stored AS MATERIALIZED (
    SELECT r.result_key, count(*) FILTER (WHERE r.origin IS NULL) AS copies_all, bool_or(r.terminal) AS finished,
           coalesce(bool_or(r.claims > 0) FILTER (WHERE scoped), false) AS quantitative,
           count(*) FILTER (WHERE r.origin IS NULL AND scoped) AS copies,
           count(*) FILTER (WHERE scoped) AS stored,
           CAST(sum(r.claims) FILTER (WHERE scoped) AS BIGINT) AS claims,
           min(f.agent) FILTER (WHERE scoped) AS agent, {_ONE.format(x="f.agent")} AS one_agent
    FROM (SELECT *, audit_copy_in_scope(copy_id) AS scoped FROM results WHERE {{chosen}}) r
    JOIN audit_file_agents f ON f.source_path = r.source_path
    GROUP BY r.result_key
),
agented AS (
    SELECT r.result_key, list_sort(list(DISTINCT f.agent)) AS agents
    FROM results r JOIN audit_file_agents f ON f.source_path = r.source_path
    WHERE {{chosen}} AND r.result_key IN (SELECT result_key FROM stored WHERE NOT one_agent)
      AND audit_copy_in_scope(r.copy_id)
    GROUP BY r.result_key
),
claimed AS (
    SELECT result_key, count(*) AS claims FROM (
        SELECT DISTINCT result_key, content_hash, pointer FROM claims
        WHERE {{chosen}} AND result_key IN (SELECT result_key FROM stored WHERE stored > 1)
          AND audit_copy_in_scope(copy_id))
    GROUP BY result_key
)
SELECT s.result_key, s.copies_all + coalesce(o.copies_all, 0) AS copies_all, s.finished,
       c.result_key IS NOT NULL AS cited_any, s.quantitative, coalesce(c.cited, false) AS cited,
       s.quantitative AND coalesce(c.valid, false) AS validly_cited, s.copies + coalesce(o.copies, 0) AS copies,
       s.stored, CASE WHEN s.stored > 1 THEN coalesce(m.claims, 0) ELSE s.claims END AS claims,
       s.agent, s.one_agent, c.study, coalesce(c.one_study, true) AS one_study,
       CASE WHEN NOT s.one_agent THEN a.agents END AS agents, CASE WHEN NOT c.one_study THEN d.studies END AS studies
FROM stored s
LEFT JOIN ({_ORIGIN_UNITS}) o ON o.result_key = s.result_key
LEFT JOIN cited c ON c.result_key = s.result_key
LEFT JOIN claimed m ON m.result_key = s.result_key
LEFT JOIN studied d ON d.result_key = s.result_key
LEFT JOIN agented a ON a.result_key = s.result_key
"""

SUMMED = "audit_summary_rows"
"""What the counts are summed from (`store.audit_sums.rows`): a temporary view that the audit makes of its statuses
(`prepare`), or of the kept sums (`audit.kept.read`)."""


def share(validly_cited: int, quantitative: int) -> float | None:
    return round(validly_cited / quantitative, 4) if quantitative else None


CITED_FIELDS = ("quantitative_results", "validly_cited_results", "validly_cited_share", "per_agent", "per_study")
"""The headline figure's part of the summary (`Archive.cited`)."""


def percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def cited_figure(group: dict) -> str:
    """The headline figure in words: how many of `group`'s quantitative results are validly cited (the totals
    of `counts`, or one agent's or study's of them), each result counted once."""
    return (
        f"{group['validly_cited_results']:,} of {group['quantitative_results']:,} quantitative results "
        f"validly cited ({percent(group['validly_cited_share'])})"
    )


def prepare(con: duckdb.DuckDBPyConnection, chosen: str = "TRUE") -> None:
    """Make `audit_file_agents` and `audit_result_status`, which the counts and some rules read, of the results
    `chosen` chooses (a condition on `result_key`) and their files."""
    prepare_agents(con, chosen)
    con.execute(RESULT_STATUS.format(chosen=chosen))
    temporary_view(con, SUMMED, audit_sums.rows("audit_result_status"))


def prepare_agents(con: duckdb.DuckDBPyConnection, chosen: str = "TRUE") -> None:
    """Make `audit_file_agents` for the files holding a result `chosen` chooses."""
    files = "TRUE" if chosen == "TRUE" else f"source_path IN (SELECT source_path FROM results WHERE {chosen})"
    con.execute(FILE_AGENTS.format(files=files))


def counts(con: duckdb.DuckDBPyConnection) -> dict:
    """Totals, and the validly cited share overall, per agent and per study (no study: uncited): the sums of
    `SUMMED`."""
    sums = con.execute(f"{audit_sums.summed(f'SELECT * FROM {SUMMED}')} ORDER BY kind, name NULLS LAST").fetchall()
    by = {kind: [dict(zip(("name", *audit_sums.SUMS), row[1:], strict=True)) for row in sums if row[0] == kind]
          for kind in (audit_sums.TOTAL, audit_sums.AGENT, audit_sums.STUDY)}  # fmt: skip
    totals = {name: total for name, total in (by[audit_sums.TOTAL] or [dict.fromkeys(audit_sums.SUMS, 0)])[0].items()
              if name != "name"}  # fmt: skip
    totals["validly_cited_share"] = share(totals["validly_cited_results"], totals["quantitative_results"])
    for name, kind, fields in (
        ("per_agent", audit_sums.AGENT, ("results", "quantitative_results", "validly_cited_results")),
        ("per_study", audit_sums.STUDY, ("quantitative_results", "validly_cited_results")),
    ):
        totals[name] = [
            {kind: group["name"], **{field: group[field] for field in fields},
             "validly_cited_share": share(group["validly_cited_results"], group["quantitative_results"])}
            for group in by[kind]
        ]  # fmt: skip
    return totals


SUMMARY_FIELDS = (
    "by",
    "name",
    "errors",
    "warnings",
    "results",
    "quantitative_results",
    "validly_cited_results",
    "validly_cited_share",
)
"""The summary's counts as rows (`audit --summary`): one per rule, agent and study, each with the counts
that apply to it (a study's findings are not counted: a finding may touch several)."""


def summary_rows(con: duckdb.DuckDBPyConnection, summary: dict, by_file: list[tuple]) -> list[dict]:
    """The audit's counts by rule (each rule run, in order), by agent and by study, as `SUMMARY_FIELDS`: the
    findings by rule and by the agent of the file they are in (`by_file`: `Audit.by_file`; a card's or an
    unreadable record's file may have none)."""
    agents = dict(con.execute("SELECT source_path, agent FROM audit_file_agents").fetchall())
    by_rule: dict[str, dict[str, int]] = {}
    by_agent: dict[str | None, dict[str, int]] = {}
    for rule, severity, path, n in by_file:
        counted = by_rule.setdefault(rule, {})
        counted[severity] = counted.get(severity, 0) + n
        if path is not None and path in agents:
            counted = by_agent.setdefault(agents[path], {})
            counted[severity] = counted.get(severity, 0) + n
    rows = [
        {"by": "rule", "name": rule, "errors": by_rule.get(rule, {}).get("error", 0),
         "warnings": by_rule.get(rule, {}).get("warning", 0)}
        for rule in summary["findings"]
    ]  # fmt: skip
    for group in summary["per_agent"]:
        found = by_agent.get(group["agent"], {})
        rows.append(
            {"by": "agent", "name": group["agent"], "errors": found.get("error", 0),
             "warnings": found.get("warning", 0), **_cited(group)}
        )  # fmt: skip
    rows += [{"by": "study", "name": group["study"], **_cited(group)} for group in summary["per_study"]]
    return [{field: row.get(field) for field in SUMMARY_FIELDS} for row in rows]


def _cited(group: dict) -> dict:
    return {name: group.get(name) for name in SUMMARY_FIELDS[4:]}
