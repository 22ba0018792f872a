"""The archive's views: the SQL of each defined once, here.

The views are the documented way to ask the archive questions from DuckDB directly; the lineage
queries (`archiver.query.lineage`) are the same SQL, narrowed to the results a filter concerns before
the costly steps. So each definition is a function of that narrowing condition, and the view is the
function with no narrowing. Migrations create tables only: these views are made after every upgrade,
and re-made whenever their SQL here changes (`create`, `stale`).
"""

from __future__ import annotations

import hashlib

import duckdb

from .chunks import wholes_sql
from .connection import transaction
from .refusals import refuse_damaged
from .tables import CLAIM_INDEX, CLAIM_INDEX_COLUMNS, CLAIM_INDEX_PENDING, RECORD_YIELDS

EVERYTHING = "TRUE"

# The citation fields a person reads, in the order the commands print them.
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


def _gathered(prefix: str = "") -> str:
    """One citation's fields over the rows that hold it: valid in all of them, inferred in any."""
    return ", ".join(
        f"bool_and({prefix}{f}) AS {f}"
        if f == "valid"
        else f"bool_or({prefix}{f}) AS {f}"
        if f == "inferred"
        else f"any_value({prefix}{f}) AS {f}"
        for f in CITATION_FIELDS
    )


def with_agent(relation: str, directory: str = "x.source_dir") -> str:
    """The rows of `relation` (each with a `source_path`) and their agent: the name on the agent card in
    the same file, else on one in the same directory (the smallest name where there are several)."""
    return f"""
    SELECT x.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM ({relation}) x
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = x.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = {directory}"""


def copy_unit(alias: str = "r") -> str:
    """What a stored copy (a row of `results` under `alias`) counts as: itself; or, for an origin copy's
    segment (a copy read from a spool segment of `archiver record`), the origin copy of its result in its
    spool, one however many segments hold a piece of it."""
    return f"coalesce('origin' || chr(31) || {alias}.origin || chr(31) || {alias}.result_key, {alias}.copy_id)"


def counted_claims() -> str:
    """How many claim rows the archive holds, an origin copy's counted once however many of its spool
    segments repeat them (what `stats` and ingest's summary call `claims`). Every row, less the repeats within
    origin copies: joining every claim to its copy took 6.9 s for 19M claims, the few of origin copies none."""
    return f"""
    SELECT (SELECT count(*) FROM claims)
         - (SELECT count(*) - count(DISTINCT ({copy_unit()}, c.content_hash, c.pointer))
            FROM claims c JOIN results r ON r.copy_id = c.copy_id WHERE r.origin IS NOT NULL)"""


PART_IDENTITY = "p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash"
"""What makes a Part (of `parts p` in a copy `results r`) the same Part in another segment of one origin copy."""


def counted_parts(where: str = "TRUE", citations: bool = False) -> str:
    """How many Parts (with `citations`, citation rows) pass `where`, a Part of an origin copy counted once
    however many of its spool segments repeat it (what `stats` calls `parts`, `citations`, ...)."""
    counted = "citations c" if citations else "parts p"  # `where` reads only these rows
    placed = "citations c JOIN parts p ON p.part_id = c.part_id" if citations else "parts p"
    return f"""
    SELECT (SELECT count(*) FROM {counted} WHERE {where})
         - (SELECT count(*) - count(DISTINCT ({copy_unit()}, {PART_IDENTITY}))
            FROM {placed} JOIN results r ON r.copy_id = p.copy_id WHERE r.origin IS NOT NULL AND {where})"""


def counted_copies() -> str:
    """How many stored copies the archive holds, an origin copy counted once (`stats`' `copies`). A row is one
    copy but in origin copies (`copy_id` is unique: `db check`), so only those are told apart (2.1 s for 1.8M
    copies against 0.4 s)."""
    return f"""
    SELECT count(*) FILTER (WHERE r.origin IS NULL) + count(DISTINCT {copy_unit()}) FILTER (WHERE r.origin IS NOT NULL)
    FROM results r"""


ORIGIN_COPIES = """
SELECT origin, result_key, any_value(kind) AS kind, any_value(task_id) AS task_id,
       any_value(message_id) AS message_id, bool_or(terminal) AS terminal,
       arg_max(state, (terminal, timestamp, source_path)) AS state, max(timestamp) AS timestamp,
       min(source_path) AS source_path, list_sort(list(source_path)) AS segments, list(copy_id) AS copy_ids
FROM results WHERE origin IS NOT NULL GROUP BY origin, result_key"""
"""One row per origin copy: a result as the agent sent it, recorded in the spool `origin`, gathered over the
copies its segments hold (`segments`, `copy_ids`); terminal when any of them is."""


def copies(where: str = EVERYTHING) -> str:
    """The stored copies of results (rows of `results`) that pass `where`, each with its agent."""
    return with_agent(f"SELECT * FROM results r WHERE {where}")


PLACES = ("agent", "timestamp", "source_sha256")
"""What a finding's place adds to it: its copy's agent, time and file version (`placed`)."""


def placed(findings: str, where: str = EVERYTHING) -> str:
    """The rows of `findings` (each with a `result_key` and `source_path`) with `PLACES`: of the first of the
    copies of its result in its file, among the copies that pass `where` (a condition on `results r`)."""
    return f"""
    SELECT f.*, c.agent, c.timestamp, c.source_sha256 FROM ({findings}) f
    LEFT JOIN (SELECT result_key, source_path, min(agent) AS agent, min(timestamp) AS timestamp,
                      min(source_sha256) AS source_sha256
               FROM ({copies(where)}) GROUP BY result_key, source_path) c
           ON c.result_key = f.result_key AND c.source_path = f.source_path"""


def result_citations(where: str = EVERYTHING) -> str:
    """The distinct citations of each result, gathered over all its stored copies (`copies`: in how
    many copies it stands; `inferred`: it lost its media type in at least one)."""
    return f"""
    SELECT result_key, citation_hash, {_gathered()}, count(*) AS copies
    FROM citations WHERE {where} GROUP BY result_key, citation_hash"""


CLAIM_CITATIONS_NARROWINGS = 4
"""How many times `claim_citations` states its narrowing condition (each with its parameters, in turn)."""


def claim_citations(narrowed: str = EVERYTHING) -> str:
    """One row per claim and each citation of its result, over the results that pass `narrowed`.

    A claim is (result_key, Part content, pointer): the same claim stored in several copies of its
    result is one claim, described by its most recent copy (`copies`: in how many it stands, an origin
    copy once however many segments repeat it: `copy_unit`), and rests
    on the citations of every copy. An uncited claim has one row with a NULL citation. A result stored
    once, as most are, needs no deduplication, so only results with several copies go through it.

    Each branch reads the tables itself, so that a query asking for few columns (`count(*)`) reads
    only those; the copies stored once meet their citations before their claims do (materialized, so
    that DuckDB hashes those copies, not the claims), and the claims stream past them.
    """

    def citation(alias: str) -> str:
        return ", ".join(f"{alias}.{f}" for f in ("citation_hash", *CITATION_FIELDS))

    claim = """
        cl.value, cl.literal, cl.unit, cl.stated, cl.cell, cl.pointer, p.part_index, cl.content_hash, p.artifact_id,
        coalesce(p.message_id, r.message_id) AS message_id, r.task_id, r.context_id, r.agent, r.timestamp,
        r.source_path, r.source_sha256, cl.result_key, r.copy_id, cl.part_id"""
    return f"""
    WITH stored AS MATERIALIZED (
        SELECT c.copy_id, c.result_key, c.message_id, c.task_id, c.context_id, c.agent, c.timestamp, c.source_path,
               c.source_sha256, c.origin, count(*) OVER (PARTITION BY c.result_key) AS stored
        FROM ({copies(f"r.claims > 0 AND {narrowed}")}) c),
    cited AS MATERIALIZED ({result_citations(narrowed)}),
    once_cited AS MATERIALIZED (
        SELECT r.*, {citation("c")} FROM stored r LEFT JOIN cited c ON c.result_key = r.result_key
        WHERE r.stored = 1)
    SELECT {claim}, 1 AS copies, {citation("r")}
    FROM (SELECT * FROM claims WHERE {narrowed}) cl
    JOIN parts p ON p.part_id = cl.part_id
    JOIN once_cited r ON r.copy_id = cl.copy_id
    UNION ALL
    SELECT k.*, {citation("c")}
    FROM (SELECT {claim},
                 count(DISTINCT {copy_unit()}) OVER (PARTITION BY cl.result_key, cl.content_hash, cl.pointer) AS copies
          FROM (SELECT * FROM claims WHERE {narrowed}) cl
          JOIN parts p ON p.part_id = cl.part_id
          JOIN stored r ON r.copy_id = cl.copy_id AND r.stored > 1
          QUALIFY row_number() OVER (PARTITION BY cl.result_key, cl.content_hash, cl.pointer
                                     ORDER BY r.timestamp DESC NULLS LAST, r.source_path, p.ordinal) = 1) k
    LEFT JOIN cited c ON c.result_key = k.result_key"""


INDEXED_CLAIMS = f"SELECT {', '.join(CLAIM_INDEX_COLUMNS)} FROM {CLAIM_INDEX}"
"""The claim index's rows, its columns in the definition's order (`tables.CLAIM_INDEX_COLUMNS`)."""

KEPT_CLAIMS = f"""
{INDEXED_CLAIMS} WHERE result_key NOT IN (SELECT result_key FROM {CLAIM_INDEX_PENDING})
UNION ALL
SELECT * FROM ({claim_citations(f"result_key IN (SELECT result_key FROM {CLAIM_INDEX_PENDING})")})"""
"""The claims counted once as the archive keeps them (`store.kept`): the index's rows, but a pending result's made
from the definition, so that the answer is the definition's whether or not the index was refreshed."""


def citation_uses(where: str = EVERYTHING) -> str:
    """One row per citation Part in a stored copy that passes `where` (over these very columns), with
    the copy's task, message, context, artifact, agent, time and file."""
    return f"""
    SELECT * FROM (
        SELECT c.citation_hash, c.study, c.period, c.fielded, c.fielded_start, c.fielded_end,
               c.base_name, c.base_n, c.weight, c.source_table, c.source_column, c.source_function,
               c.warnings, c.valid, c.problems, c.inferred, c.part_id AS citation_part_id,
               r.copy_id, r.result_key, r.kind AS result_kind, r.task_id,
               coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
               r.agent, r.timestamp, r.source_path, r.source_sha256
        FROM citations c
        JOIN ({copies()}) r ON r.copy_id = c.copy_id
        JOIN parts p ON p.part_id = c.part_id) u
    WHERE {where}"""


CITATION_INDEX_FIELDS = (*CITATION_FIELDS, "claims", "results", "tasks", "agents", "citation_hash")


def citation_index(where: str = EVERYTHING, parts: str = EVERYTHING) -> str:
    """One row per distinct citation among the citation Parts that pass `where` (over a citation's
    columns and its copy's task_id, agent and timestamp, as `u`), with the claims, results, tasks and agents
    resting on it. A result's claims are counted once however many copies hold them. `parts`, a condition
    over a citation Part's own columns (as `u`, its parameters before `where`'s) that every Part `where` passes
    also passes, chooses the Parts first: only their copies are read and given their agent (a study's small
    bases at 10M claims: 0.14 s, from 0.24 s)."""
    chosen, cited, copied, stored = "", "citations c", copies(), "results"
    if parts != EVERYTHING:  # every copy of the results the Parts are in, read once: the uses' and the counts'
        chosen = f"""parts_chosen AS MATERIALIZED (SELECT * FROM citations u WHERE {parts}),
    copies_chosen AS MATERIALIZED (
        SELECT copy_id, result_key, task_id, timestamp, source_path, source_dir, claims FROM results
        WHERE result_key IN (SELECT result_key FROM parts_chosen)),
    """
        cited, stored = "parts_chosen c", "copies_chosen"
        copied = with_agent("SELECT * FROM copies_chosen WHERE copy_id IN (SELECT copy_id FROM parts_chosen)")
    return f"""
    WITH {chosen}uses AS MATERIALIZED (
        SELECT u.* FROM (
            SELECT c.*, r.task_id, r.agent, r.timestamp
            FROM {cited} JOIN ({copied}) r ON r.copy_id = c.copy_id) u
        WHERE {where}),
    stored AS (
        SELECT result_key, count(*) AS copies, sum(claims) AS claims FROM {stored}
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
        SELECT u.citation_hash, {_gathered("u.")}, count(DISTINCT u.result_key) AS results,
               count(DISTINCT u.task_id) AS tasks, count(DISTINCT u.agent) AS agents
        FROM uses u GROUP BY u.citation_hash)
    SELECT {", ".join(f"g.{f}" for f in CITATION_FIELDS)}, coalesce(cc.claims, 0)::BIGINT AS claims,
           g.results, g.tasks, g.agents, g.citation_hash
    FROM grouped g LEFT JOIN citation_claims cc ON cc.citation_hash = g.citation_hash"""


QUARANTINE = f"""
SELECT q.source_path, q.locator, q.line, q.byte_offset, q.reason, q.sha256, coalesce(q.raw, w.value) AS raw,
       q.ingested_at
FROM records q LEFT JOIN {wholes_sql("SELECT raw_chunked FROM records WHERE status = 'quarantined'")} w
  ON w.value_sha256 = q.raw_chunked
WHERE q.status = 'quarantined'"""


def latest_verdicts(where: str = EVERYTHING) -> str:
    """Each citation's latest verdict among those that pass `where`."""
    return f"""
SELECT * FROM verdicts WHERE {where}
QUALIFY row_number() OVER (PARTITION BY result_key, citation_hash ORDER BY verified_at DESC, run_id DESC) = 1"""


LATEST_VERDICTS = latest_verdicts()
JUDGED_VERDICTS = latest_verdicts("NOT coalesce(comparison_given, FALSE)")
"""Each citation's latest verdict made under the data layer's own comparison: what the audit judges by."""

# Every view, in an order in which each reads only views made before it.
VIEWS: dict[str, str] = {
    "quarantine": QUARANTINE,
    "result_agents": f"SELECT copy_id, agent FROM ({copies()})",
    "citation_uses": citation_uses(),
    "result_citations": result_citations(),
    "claim_citations_derived": claim_citations(),
    "claim_citations": KEPT_CLAIMS,
    "claim_lineage": "SELECT * FROM claim_citations",
    "citation_index": citation_index(),
    "latest_verdicts": LATEST_VERDICTS,
    "origin_copies": ORIGIN_COPIES,
}

FINGERPRINT = hashlib.sha256("\n;\n".join(f"{name}\n{sql}" for name, sql in VIEWS.items()).encode()).hexdigest()


def stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the archive's views are not (yet) the ones defined here."""
    try:
        made = con.execute("SELECT fingerprint FROM schema_views").fetchall()
    except duckdb.CatalogException:
        return True
    return made != [(FINGERPRINT,)]


def create(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)make every view as defined here in the archive, in one transaction, and record which definitions they
    are: for whoever reads the archive with DuckDB itself. The archiver never reads them (`define`)."""
    database, path = con.execute(
        "SELECT database_name, path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    stored = '"' + database.replace('"', '""') + '".main.'
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [database]).fetchall()
    refuse_damaged(
        path or database,
        [f"{name} is a table, where the archiver keeps its view" for (name,) in tables if name in VIEWS],
    )
    with transaction(con):
        for name in reversed(VIEWS):
            con.execute(f"DROP VIEW IF EXISTS {stored}{name}")
        for name, sql in VIEWS.items():
            con.execute(f"CREATE VIEW {stored}{name} AS {sql}")
        con.execute("DELETE FROM schema_views")
        con.execute("INSERT INTO schema_views VALUES (?, now())", [FINGERPRINT])


def define(con: duckdb.DuckDBPyConnection) -> None:
    """Make every view as defined here a temporary view of `con`, which DuckDB finds before any view of the
    archive's own: what the archiver and `archiver sql` read, whatever the archive file or a lake's catalog
    holds under those names (`store.trust`). Temporary views are the connection's (a cursor has none:
    `cursor`); read-only connections may make them."""
    with transaction(con):
        define_in(con)


def define_in(con: duckdb.DuckDBPyConnection) -> None:
    """`define`, in the caller's transaction. Where nothing is pending in a DuckDB file (`SETTLED`),
    `claim_citations` is the index itself: a join with the (empty) pending keys costs DuckDB its late reading of
    a sorted page's rows (1.2 s against 0.3 s for a column's first 50 claims at 10M claims). The file cannot
    change under a connection but by its own writes, after which the archive defines its views again
    (`Archive._writing`); a lake's other writers can, so a lake's view always reads the pending keys."""
    con.execute(TEMPORARY_VIEWS[bool(con.execute(SETTLED).fetchone()[0])])


IN_DUCKDB_FILE = "(SELECT type FROM duckdb_databases() WHERE database_name = current_database()) = 'duckdb'"
"""Whether the archive the connection has open is a DuckDB file (not a lake)."""

SETTLED = f"""
SELECT NOT EXISTS (SELECT 1 FROM {CLAIM_INDEX_PENDING}) AND {IN_DUCKDB_FILE}"""
"""Whether the claim index holds every result's rows and the archive is a DuckDB file (`define_in`)."""


def _temporary(views: dict[str, str]) -> str:
    return ";\n".join(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}" for name, sql in views.items())


TEMPORARY_VIEWS = {
    False: _temporary(VIEWS),
    True: _temporary({**VIEWS, "claim_citations": INDEXED_CLAIMS}),
}
"""Every view as a temporary view of the connection that runs it (`define_in`), in the transaction it is in; by
whether the archive is settled (`SETTLED`)."""


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor of the archive's connection `con`, with the package's views (`define`): every cursor the archiver
    reads the archive with."""
    made = con.cursor()
    try:
        define(made)
    except BaseException:
        made.close()
        raise
    return made


STAT_QUERIES = {
    "sources": "SELECT count(DISTINCT path) FROM sources WHERE alias_of IS NULL",
    "records": "SELECT count(*) FROM records WHERE kind <> 'filler'",
    "quarantined": "SELECT count(*) FROM records WHERE status = 'quarantined'",
    "tasks": "SELECT count(DISTINCT task_id) FROM results WHERE kind = 'task'",
    "results": "SELECT count(DISTINCT result_key) FROM results",
    "copies": counted_copies(),
    "origin_copies": "SELECT count(*) FROM origin_copies",
    "results_with_origin": "SELECT count(DISTINCT result_key) FROM origin_copies",
    "parts": counted_parts(),
    "parts_undecoded": counted_parts("p.kind = 'unknown'"),
    "citations": counted_parts(citations=True),
    "citations_inferred": counted_parts("c.inferred", citations=True),
    "citations_invalid": counted_parts("NOT c.valid", citations=True),
    "claims": counted_claims(),
    "agent_cards": "SELECT count(*) FROM agent_cards",
    "error_responses": "SELECT count(*) FROM rpc_errors",
    "paths_aliased": "SELECT count(*) FROM sources WHERE alias_of IS NOT NULL",
    "healed_rows": "SELECT coalesce(sum(rows), 0) FROM healed",
    **{
        f"records_{kind.replace('-', '_')}": f"SELECT count(*) FROM records WHERE status = 'ok' AND yields = '{kind}'"
        for kind in RECORD_YIELDS
    },
}
"""`records_<kind>`: the records read that yielded each kind (`RECORD_YIELDS`); records ingested before the
archive knew it (schema 11 and earlier) are in none."""

_YIELD_WORDS = {
    "result": ("records yielding a result", "they joined a stored copy"),
    "status": ("status-only events", ""),
    "user-message": ("user's own messages", ""),
    "request": ("requests with no message", ""),
    "agent-card": ("agent card records", ""),
    "push-config": ("push configurations", ""),
    "error": ("error response records", ""),
    "empty": ("empty answers", "null, an empty list"),
    "nothing": ("records yielding nothing understood", "the audit names each: unrecognised-record"),
}

STAT_WORDS: dict[str, tuple[str, str]] = {
    "sources": ("source files", "a file stored under another path too counts once"),
    "records": ("records read", "runs of blank lines and keep-alives apart"),
    "quarantined": ("records quarantined", "they could not be read, and are kept with why"),
    "tasks": ("tasks", ""),
    "results": ("results, each counted once", "tasks, and messages outside tasks"),
    "copies": ("stored copies of results", "one in three files counts three; an origin copy once"),
    "origin_copies": ("origin copies, recorded at the agent", "by the recording proxy, as the agent sent them"),
    "results_with_origin": ("results with an origin copy", ""),
    "parts": ("Parts in stored copies", ""),
    "parts_undecoded": ("Parts not decoded", "of no kind A2A defines"),
    "citations": ("citation Parts in stored copies", ""),
    "citations_inferred": ("citations that lost their media type", "recognised by their fields"),
    "citations_invalid": ("invalid citations", "citation Parts in stored copies"),
    "claims": ("claims in stored copies", "one in two copies counts twice; audit and query count it once"),
    "agent_cards": ("agent cards", ""),
    "error_responses": ("error responses", ""),
    "paths_aliased": ("paths holding bytes stored under another", ""),
    "healed_rows": ("rows healed after an interrupted write", "index rows no committed ingest recorded, removed"),
    **{f"records_{kind.replace('-', '_')}": words for kind, words in _YIELD_WORDS.items()},
}
"""What each of `STAT_QUERIES` counts: a label (the web view's overview) and what to know of it, in the
words of docs/ingest.md (`described`: the third column of `archiver stats`)."""


def described(name: str) -> str:
    """What the count `name` counts, in words: its label, and what to know of it in brackets."""
    label, detail = STAT_WORDS[name]
    return f"{label} ({detail})" if detail else label
