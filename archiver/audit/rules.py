"""The audit's rules: one set-based query over the index per rule, spelling each finding's sentence.

Every query reads the scope made by `archiver.audit.scope` (the `audit_copy_in_scope`
macro, the `audit_cards` and `audit_records` tables) to decide which findings to report,
but judges against the whole archive: a copy outside the scope still counts as "another
copy" of a result, and a citation anywhere still makes a result cited.

Each query returns the finding columns (`result_key`, `task_id`, `message_id`,
`context_id`, `artifact_id`, `part_index`, `source_path`, `locator`, `line`), `severity`
(NULL for the rule's default) and `detail`, the sentence, written in SQL with the macros
of `archiver.audit.wording` so that no finding needs a Python object of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..defaults import MIN_BASE
from ..errors import UsageError
from ..store import views
from ..store.chunks import wholes_sql
from .rerun import NOT_RERUNNABLE, RERUN_DIFFERS, RERUN_PARTIAL, RERUN_UNSCOPED

ERROR = "error"
WARNING = "warning"

# The stored copy's first record: where a person finds the copy in its source file.
_COPY_RECORD = "LEFT JOIN records rec ON rec.record_id = r.record_ids[1] AND rec.source_path = r.source_path"

# Where a Part sits, for findings about one Part.
_PART_COLUMNS = """
    r.result_key, r.task_id, coalesce(p.message_id, r.message_id) AS message_id, r.context_id, p.artifact_id,
    p.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line"""

# A window's partition or order key, for the rows of origin copies (of `results r`) only: every other copy
# is a unit of its own (`copy_unit`), its rows kept whatever the window says, so partitioning or sorting
# them by long keys would be work for nothing.
_ORIGIN_ONLY = "CASE WHEN r.origin IS NOT NULL THEN ({}) END"

# A Part of an origin copy spread over several spool segments (a send, then a get) is one Part: reported
# once, where it was first recorded. Other copies' Parts are each their own.
_ONE_PER_ORIGIN_PART = f"""
QUALIFY r.origin IS NULL OR row_number() OVER (
    PARTITION BY {_ORIGIN_ONLY.format(f"{views.copy_unit()}, {views.PART_IDENTITY}")}
    ORDER BY {_ORIGIN_ONLY.format("r.source_path")}, {_ORIGIN_ONLY.format("rec.line")}) = 1"""

# `citation Part 2 of artifact "nps" in task t2`, for findings about one citation Part.
_CITATION_PART = """'citation ' || audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                                     coalesce(p.message_id, r.message_id))
    || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id))"""

# The copies to report on: in scope, holding claims, of a result no copy cites that has finished
# (this copy or another is terminal: `audit_result_status`, made by `archiver.audit.summary`); of an
# origin copy spread over several spool segments, the segment holding the most claims.
# How many numbers each states (claims, not distinct), where (its artifacts; whether an agent
# message), and its first Part that holds one. Claims sit only in an agent's data Parts that are
# no citation, so only those Parts are read.
UNCITED_RESULT = f"""
WITH uncited AS MATERIALIZED (
    SELECT r.copy_id, r.result_key, r.kind, r.task_id, r.message_id, r.context_id, r.source_path, r.locator,
           r.record_ids[1] AS record_id
    FROM results r
    WHERE r.claims > 0 AND audit_copy_in_scope(r.copy_id)
      AND r.result_key IN (SELECT result_key FROM audit_result_status WHERE finished AND NOT cited_any)
    QUALIFY r.origin IS NULL OR row_number() OVER (
        PARTITION BY {_ORIGIN_ONLY.format(views.copy_unit())}
        ORDER BY {_ORIGIN_ONLY.format("r.claims")} DESC, {_ORIGIN_ONLY.format("r.source_path")}) = 1
),
numbered AS (
    SELECT part_id, count(*) AS numbers FROM claims WHERE copy_id IN (SELECT copy_id FROM uncited) GROUP BY part_id
),
quantitative AS (
    SELECT p.copy_id, sum(n.numbers) AS numbers,
           arg_min({{'message_id': p.message_id, 'artifact_id': p.artifact_id, 'part_index': p.part_index}},
                   p.ordinal) AS first,
           list_sort(list(DISTINCT coalesce(p.artifact_name, p.artifact_id))
                     FILTER (WHERE p.location = 'artifact')) AS artifacts,
           coalesce(sum(n.numbers) FILTER (WHERE p.location = 'message'), 0) AS numbers_in_messages
    FROM numbered n
    JOIN parts p ON p.part_id = n.part_id AND p.role = 'agent' AND p.kind = 'data' AND NOT p.is_citation
    GROUP BY p.copy_id
),
placed AS (
    SELECT q.*, coalesce(q.first.message_id, u.message_id) AS message_id, concat_ws(' and ',
        CASE WHEN len(q.artifacts) > 0
             THEN CASE WHEN len(q.artifacts) = 1 THEN 'artifact ' ELSE 'artifacts ' END
                  || array_to_string(list_transform(q.artifacts, a -> audit_quote(a)), ', ') END,
        CASE WHEN q.numbers_in_messages > 0 THEN 'an agent message' END) AS places
    FROM quantitative q
    JOIN uncited u ON u.copy_id = q.copy_id
)
SELECT u.result_key, u.task_id, q.message_id, u.context_id, q.first.artifact_id, q.first.part_index, u.source_path,
       coalesce(rec.locator, u.locator) AS locator, rec.line, NULL AS severity,
       audit_result(u.kind, u.task_id, q.message_id) || ' states ' || q.numbers || ' number'
       || CASE WHEN q.numbers = 1 THEN '' ELSE 's' END || CASE WHEN q.places = '' THEN '' ELSE ' in ' || q.places END
       || ' and carries no citation Part' AS detail
FROM placed q
JOIN uncited u ON u.copy_id = q.copy_id
LEFT JOIN records rec ON rec.record_id = u.record_id AND rec.source_path = u.source_path
"""

_DATA = "coalesce(p.data, CAST(decode(wd.value) AS JSON))"
"""A Part's `data`, stored in its cell or in chunks (`store.chunks`)."""


def _whole_data(parts: str) -> str:
    """The join that gives `_DATA` the whole value of the chunked `data` of Parts meeting `parts`."""
    chosen = f"SELECT data_chunked FROM parts WHERE {parts} AND data_chunked IS NOT NULL"
    return f"LEFT JOIN {wholes_sql(chosen)} wd ON wd.value_sha256 = p.data_chunked"


_SMALL = "c.base_n > 0 AND c.base_n = floor(c.base_n) AND c.base_n < $min_base"
"""A citation whose base is a count below the minimum base."""


def _first_of(reported: str) -> str:
    """Whether a citation row is one its rule reports (`reported`) and the first such row of its Part: every
    row of a copy of its own, the first recorded of an origin copy's Part spread over spool segments."""
    part = _ORIGIN_ONLY.format(f"{views.copy_unit()}, {views.PART_IDENTITY}")
    first = _ORIGIN_ONLY.format("r.source_path, rec.line")
    return f"""coalesce({reported}, FALSE) AND (r.origin IS NULL OR row_number() OVER (
        PARTITION BY {part}, coalesce({reported}, FALSE) ORDER BY {first}) = 1)"""


# The citation Parts in scope that a citation rule reports (invalid, untyped, or of a small
# base), with where each sits: made once for those rules, so the index is read once for them. A Part of
# an origin copy is one Part however many segments hold it, reported once, but each rule reports its own
# first row of it (`first_invalid`, `first_lost`, `first_small`): one segment may have lost the media type
# another kept, and which one sorts first must not decide whether that is found.
CITED_PARTS = f"""
CREATE OR REPLACE TEMP TABLE audit_cited_parts AS
SELECT {_PART_COLUMNS}, c.valid, c.problems, c.inferred, c.base_n, c.base_name,
       {_first_of("NOT c.valid")} AS first_invalid, {_first_of("c.inferred")} AS first_lost,
       {_first_of(_SMALL)} AS first_small,
       {_CITATION_PART} AS citation_part,
       'data ' || audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                                   coalesce(p.message_id, r.message_id))
       || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) AS data_part,
       CASE WHEN c.inferred THEN p.media_type END AS media_type,
       CASE WHEN c.inferred
            THEN list_filter(['study', 'period', 'base', 'source'], k -> json_exists({_DATA}, '$.' || k)) END AS keys
FROM (SELECT * FROM citations c
      WHERE (NOT c.valid OR c.inferred OR ({_SMALL})) AND audit_copy_in_scope(c.copy_id)) c
JOIN parts p ON p.part_id = c.part_id AND p.is_citation
{_whole_data("is_citation")}
JOIN results r ON r.copy_id = c.copy_id
{_COPY_RECORD}
"""

_CITED_PART_COLUMNS = """result_key, task_id, message_id, context_id, artifact_id, part_index, source_path, locator,
       line, NULL AS severity"""

INVALID_CITATION = f"""
SELECT {_CITED_PART_COLUMNS},
       citation_part || ' fails Citations v1: '
       || coalesce(nullif(array_to_string(problems, '; '), ''), 'fails the spec') AS detail
FROM audit_cited_parts
WHERE first_invalid
"""

CITATION_TYPE_LOST = f"""
SELECT {_CITED_PART_COLUMNS},
       data_part || ' carries a citation''s fields (' || array_to_string(keys, ', ') || ') but '
       || CASE WHEN coalesce(media_type, '') = '' THEN 'no media type' ELSE 'media type ' || media_type END
       || ', so consumers do not recognise it as a citation' AS detail
FROM audit_cited_parts
WHERE first_lost
"""

SMALL_BASE = f"""
SELECT {_CITED_PART_COLUMNS},
       citation_part || ' rests on base ' || audit_quote(base_name) || ' of n = ' || audit_g(base_n)
       || ', below the minimum base of ' || audit_g(CAST($min_base AS DOUBLE)) AS detail
FROM audit_cited_parts
WHERE first_small
"""

# For every result stored more than once (an origin copy spread over several spool segments counts
# once: `copy_unit`): the Part contents (canonical hashes) each copy holds, undecoded Parts left out (no
# content is known of them); the copies in scope, terminal, that hold fewer than their result does, unless
# they cannot show it: a copy holding an undecoded agent Part, or whose file version (with the versions it
# extends) holds a quarantined record naming its task, may hold there the very Part it seems to lack (the
# record is reported by unreadable-record). An origin copy is never said to lack a Part: it is what the
# agent sent, and a gap in it (a proxy started mid-stream, a client gone) is a gap in the recording. For
# the others, each content another copy holds, whether it is a citation there, and one copy holding it to
# point the reader at: the origin copy first (then the agent sent it), else a terminal one.
DROPPED_PART = f"""
WITH copied AS (
    SELECT result_key FROM audit_result_status WHERE copies_all > 1
),
units AS MATERIALIZED (
    SELECT r.copy_id, {views.copy_unit()} AS unit
    FROM results r WHERE r.result_key IN (SELECT result_key FROM copied)
),
held AS MATERIALIZED (
    SELECT DISTINCT u.unit, p.result_key, p.content_hash
    FROM parts p JOIN units u ON u.copy_id = p.copy_id
    WHERE p.role = 'agent' AND p.kind <> 'unknown'
),
undecoded AS (
    SELECT DISTINCT p.copy_id
    FROM parts p
    WHERE p.role = 'agent' AND p.kind = 'unknown' AND p.result_key IN (SELECT result_key FROM copied)
),
fewer AS MATERIALIZED (
    SELECT r.copy_id, r.result_key, r.task_id, r.source_path, r.source_sha256
    FROM results r
    JOIN (SELECT result_key, count(DISTINCT content_hash) AS n FROM held GROUP BY result_key) whole
      ON whole.result_key = r.result_key
    LEFT JOIN (SELECT unit, count(*) AS n FROM held GROUP BY unit) mine ON mine.unit = r.copy_id
    WHERE r.terminal AND r.origin IS NULL AND coalesce(mine.n, 0) < whole.n
      AND r.copy_id NOT IN (SELECT copy_id FROM undecoded)
      AND audit_copy_in_scope(r.copy_id)
),
unreadable AS (
    SELECT DISTINCT f.copy_id
    FROM fewer f
    JOIN sources mine ON mine.path = f.source_path AND mine.sha256 = f.source_sha256
    JOIN sources v ON v.path = mine.path AND coalesce(v.lineage, v.sha256) = coalesce(mine.lineage, mine.sha256)
    JOIN records rec ON rec.source_path = v.path AND rec.source_sha256 = v.sha256
    LEFT JOIN {wholes_sql("SELECT raw_chunked FROM records WHERE status = 'quarantined'")} w
      ON w.value_sha256 = rec.raw_chunked
    WHERE rec.status = 'quarantined' AND f.task_id IS NOT NULL
      AND contains(CAST(coalesce(rec.raw, w.value) AS VARCHAR),
                   CAST(encode('"' || f.task_id || '"') AS VARCHAR))  -- both escaped alike
),
short AS MATERIALIZED (
    SELECT copy_id, result_key FROM fewer WHERE copy_id NOT IN (SELECT copy_id FROM unreadable)
),
missing AS (
    SELECT s.copy_id, h.result_key, h.content_hash
    FROM short s
    JOIN (SELECT DISTINCT result_key, content_hash FROM held
          WHERE result_key IN (SELECT result_key FROM short)) h ON h.result_key = s.result_key
    WHERE NOT EXISTS (
        SELECT 1 FROM held mine WHERE mine.unit = s.copy_id AND mine.content_hash = h.content_hash
    )
),
examples AS (
    SELECT p.result_key, p.content_hash, bool_or(p.is_citation) AS citation,
           arg_min(p.part_id, (holder.origin IS NULL, NOT holder.terminal, p.source_path, p.ordinal)) AS example
    FROM parts p
    JOIN (SELECT DISTINCT result_key, content_hash FROM missing) wanted
      ON wanted.result_key = p.result_key AND wanted.content_hash = p.content_hash
    JOIN results holder ON holder.copy_id = p.copy_id
    WHERE p.role = 'agent' AND p.result_key IN (SELECT result_key FROM short)
    GROUP BY p.result_key, p.content_hash
)
SELECT r.result_key, r.task_id, coalesce(e.message_id, r.message_id) AS message_id, r.context_id, e.artifact_id,
       e.part_index, r.source_path, coalesce(rec.locator, r.locator) AS locator, rec.line,
       CASE WHEN x.citation THEN 'error' ELSE 'warning' END AS severity,
       CASE WHEN holder.origin IS NULL THEN NULL ELSE holder.source_path END AS reference,
       audit_dropped(holder.origin IS NOT NULL, coalesce(nullif(r.state, ''), 'terminal'),
                     audit_result(r.kind, r.task_id, coalesce(e.message_id, r.message_id)),
                     CASE WHEN x.citation THEN 'citation' ELSE coalesce(e.kind, 'None') END,
                     coalesce(nullif(holder.state, ''), 'stored'), holder.source_path,
                     'Part ' || coalesce(CAST(e.part_index AS VARCHAR), 'None') || ' of '
                     || CASE WHEN e.location = 'artifact'
                             THEN 'artifact ' || audit_quote(coalesce(e.artifact_name, e.artifact_id))
                             ELSE audit_message(coalesce(e.message_id, r.message_id)) END) AS detail
FROM missing m
JOIN results r ON r.copy_id = m.copy_id
JOIN examples x ON x.result_key = m.result_key AND x.content_hash = m.content_hash
JOIN parts e ON e.part_id = x.example
JOIN results holder ON holder.copy_id = e.copy_id
{_COPY_RECORD}
"""

# Every Part in scope that no reader could decode (kind unknown, stored whole in `data`): where it
# sits, and the keys it had, so that a reader can tell which dialect it came in.
UNDECODED_PART = f"""
SELECT {_PART_COLUMNS}, NULL AS severity,
       audit_part_place(p.location, p.part_index, coalesce(p.artifact_name, p.artifact_id),
                        coalesce(p.message_id, r.message_id))
       || ' in ' || audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id))
       || ' could not be decoded (keys: ' || coalesce(array_to_string(list_sort(json_keys({_DATA})), ', '), '')
       || CASE WHEN p.media_type IS NULL THEN '' ELSE '; media type ' || p.media_type END
       || '): it is stored raw, and no evidence of a dropped Part' AS detail
FROM (SELECT * FROM parts WHERE kind = 'unknown' AND audit_copy_in_scope(copy_id)) p
JOIN (SELECT * FROM results WHERE copy_id IN (SELECT copy_id FROM parts WHERE kind = 'unknown')) r
  ON r.copy_id = p.copy_id
{_whole_data("kind = 'unknown'")}
{_COPY_RECORD}
{_ONE_PER_ORIGIN_PART}
"""

CARD_MODE_UNDECLARED = """
SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, c.source_path, rec.locator, rec.line, NULL AS severity,
       'agent card ' || audit_quote(c.name) || CASE WHEN c.declares_extension
           THEN ' declares the Citations v1 extension but lists its media type '
                || 'in neither defaultOutputModes nor any skill''s outputModes'
           ELSE ' lists the citations media type among its output modes '
                || 'but does not declare the Citations v1 extension' END AS detail
FROM agent_cards c
LEFT JOIN records rec ON rec.record_id = c.record_id AND rec.source_path = c.source_path
WHERE c.declares_extension <> c.lists_media_type
  AND c.card_id IN (SELECT card_id FROM audit_cards)
"""

UNREADABLE_RECORD = """
SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, rec.source_path, rec.locator, rec.line, NULL AS severity,
       'record at ' || coalesce(rec.locator, 'None') || ' was quarantined at ingest ('
       || coalesce(rec.reason, 'None') || '); it may hide a result' AS detail
FROM records rec
WHERE rec.status = 'quarantined' AND rec.record_id IN (SELECT record_id FROM audit_records)
  AND NOT EXISTS (  -- a file that could not be read, and was read since: nothing is hidden any more
      SELECT 1 FROM sources unread JOIN sources since
        ON since.path = unread.path AND since.ingested_at > unread.ingested_at
       AND since.container IS DISTINCT FROM 'unreadable'
      WHERE unread.path = rec.source_path AND unread.sha256 = rec.source_sha256 AND unread.container = 'unreadable')
"""

UNRECOGNISED_RECORD = """
SELECT NULL AS result_key, NULL AS task_id, NULL AS message_id, NULL AS context_id, NULL AS artifact_id,
       NULL AS part_index, rec.source_path, rec.locator, rec.line, NULL AS severity,
       'record at ' || coalesce(rec.locator, 'None') || ' was read but yields no result and no known non-result: '
       || coalesce(rec.reason, 'None') AS detail
FROM records rec
WHERE rec.status = 'ok' AND rec.yields = 'nothing' AND rec.record_id IN (SELECT record_id FROM audit_records)
"""


# The quantity a claim states, where the claim can be tied to it without guessing: its result rests on one
# valid citation (so the claim is that citation's), and its cell is named by the claim's key, or, in a
# list of rows, by the row's text members that state no number and the key ("18-34: share"), as the core
# writes `claims.cell` at ingest; a claim under a row of no text, or under rows of rows, names no cell and
# is left out. Two claims of one quantity in different results
# conflict when their values differ beyond the rounding of the coarser literal, and are not a hundredfold
# apart (a percent beside a fraction states one value in two units). Values are compared once each.
_DECIMALS = """(length(split_part(split_part(lower({literal}), 'e', 1), '.', 2))
                - coalesce(TRY_CAST(split_part(lower({literal}), 'e', 2) AS INTEGER), 0))"""
"""The decimal places a literal was written to: "3.5E+6" to 5 places before the point, -5."""
_QUANTITY_FIELDS = ("study", "period", "base_name", "weight", "source_table", "source_column", "source_function")


def quantity_ctes(results: str = "TRUE") -> str:
    """The CTEs `single` (each result, of those `results` chooses, resting on one valid citation, and which) and
    `quantities` (each such citation's quantity: its fields, and a 128-bit digest of them to group by, two
    quantities sharing one as likely as an MD5 collision, and as hex text to keep: casting the number to text took
    6 s for 46,000 results; worked out once a citation, not a result)."""
    return f"""
single AS MATERIALIZED (
    SELECT result_key, any_value(citation_hash) AS citation_hash
    FROM citations WHERE {results}
    GROUP BY result_key HAVING count(DISTINCT citation_hash) = 1 AND bool_and(valid)
),
quantities AS MATERIALIZED (
    SELECT citation_hash, {", ".join(f"any_value({f}) AS {f}" for f in _QUANTITY_FIELDS)},
           md5_number(to_json(list_value({", ".join(f"any_value({f})" for f in _QUANTITY_FIELDS)}))) AS quantity,
           md5(to_json(list_value({", ".join(f"any_value({f})" for f in _QUANTITY_FIELDS)}))) AS quantity_text
    FROM citations WHERE citation_hash IN (SELECT citation_hash FROM single) GROUP BY citation_hash
)"""


def result_quantities(results: str) -> str:
    """Each result (of those `results` chooses) resting on one valid citation, and its quantity's digest as text:
    what `conflicting-claims` compares a result's claims within (kept per result by `audit.kept`)."""
    return f"""WITH {quantity_ctes(results)}
        SELECT s.result_key, q.quantity_text AS quantity FROM single s JOIN quantities q USING (citation_hash)"""


def conflicting_claims(results: str = "TRUE") -> str:
    """`conflicting-claims` over the results `results` chooses (TRUE: every result): all of a quantity's results
    must be chosen for its findings to be the whole archive's (`audit.kept` chooses whole quantities)."""
    return f"""
WITH {quantity_ctes(results)},
cited AS MATERIALIZED (  -- of the quantities holding a copy in scope: only a claim of a copy in scope is reported
    SELECT s.result_key, q.* EXCLUDE (citation_hash, quantity_text)
    FROM single s JOIN quantities q USING (citation_hash)
    WHERE q.quantity IN (
        SELECT q.quantity FROM single s JOIN quantities q USING (citation_hash)
        WHERE s.result_key IN (SELECT result_key FROM results WHERE audit_copy_in_scope(copy_id)))
),
valued AS (  -- the claims of those results that state a finite number in a cell
    SELECT q.quantity, cl.* FROM claims cl JOIN cited q ON q.result_key = cl.result_key
    WHERE cl.value IS NOT NULL AND isfinite(cl.value) AND cl.cell IS NOT NULL
),
differing AS MATERIALIZED (  -- the quantities (and cells) whose values differ at all: over every claim at once,
    -- each a few numbers wide, so that only these claims are gathered below
    SELECT quantity, cell FROM valued GROUP BY quantity, cell HAVING max(value) > min(value)
),
spread AS MATERIALIZED (  -- of those, the ones whose values differ beyond the finest rounding
    SELECT v.quantity, v.cell FROM valued v JOIN differing USING (quantity, cell)
    GROUP BY v.quantity, v.cell
    HAVING max(v.value) - min(v.value) > 0.5 * pow(10, -max({_DECIMALS.format(literal="v.literal")}))
),
claimed AS MATERIALIZED (  -- each claim of those quantities once, however many copies hold it, in the cell
    -- the core found it fills (cite/claims.rs). Read from `valued` (its claims, each joined with its result's
    -- quantity), then its spread cells: joined with claims in one join on (result_key, cell), the results' quantity
    -- cells made a build side of a million rows that spilled (9-11 s a batch of 48 quantities at 10M claims, 2.3 s)
    SELECT cl.quantity, cl.result_key, cl.pointer, cl.value, arg_min(cl.literal, cl.copy_id) AS literal,
           arg_min(coalesce(cl.stated, cl.literal), cl.copy_id) AS written,  -- as the agent wrote it: "35%", 0.35
           arg_min(cl.part_id, cl.copy_id) AS part_id, min(cl.copy_id) AS copy_id, arg_min(cl.cell, cl.copy_id) AS cell
    FROM valued cl JOIN spread s ON s.quantity = cl.quantity AND s.cell = cl.cell
    GROUP BY cl.quantity, cl.result_key, cl.pointer, cl.value
),
candidates AS MATERIALIZED (  -- with the decimal places its literal was written to
    SELECT c.*, {_DECIMALS.format(literal="c.literal")} AS decimals FROM claimed c
),
stated AS (  -- each value stated of a quantity, once, with a result stating it
    SELECT quantity, cell, value, min(decimals) AS decimals, arg_min(result_key, result_key) AS result_key,
           arg_min(written, result_key) AS written, arg_min(copy_id, result_key) AS copy_id
    FROM candidates GROUP BY quantity, cell, value
),
conflicting AS (
    SELECT a.*, o.result_key AS other_key, o.written AS other_written, o.copy_id AS other_copy
    FROM candidates a
    JOIN stated o ON o.quantity = a.quantity AND o.cell = a.cell AND o.result_key <> a.result_key
    CROSS JOIN LATERAL (SELECT pow(10, -a.decimals) AS mine, pow(10, -o.decimals) AS theirs) step
    WHERE abs(o.value - a.value) > 0.5 * greatest(step.mine, step.theirs)
      AND abs(100 * o.value - a.value) > 0.5 * greatest(step.mine, 100 * step.theirs)
      AND abs(o.value - 100 * a.value) > 0.5 * greatest(100 * step.mine, step.theirs)
      AND audit_copy_in_scope(a.copy_id)
    QUALIFY row_number() OVER (  -- a value in the same unit first, then the farthest
        PARTITION BY a.result_key, a.pointer
        ORDER BY abs(o.value - a.value) > least(abs(o.value - 100 * a.value), abs(100 * o.value - a.value)),
                 abs(o.value - a.value) DESC, o.result_key) = 1
),
described AS (
    SELECT k.*, {", ".join(f"q.{f}" for f in _QUANTITY_FIELDS)}
    FROM conflicting k JOIN cited q ON q.result_key = k.result_key
)
SELECT {_PART_COLUMNS}, NULL AS severity, other.source_path AS reference,
       audit_result(r.kind, r.task_id, coalesce(p.message_id, r.message_id)) || ' claims '
       || audit_quote(k.cell) || ' = ' || k.written || ' where '
       || audit_result(other.kind, other.task_id, other.message_id) || ' claims ' || k.other_written
       || ', both citing ' || audit_quote(k.study) || ', ' || audit_quote(k.period) || ', ' || k.source_function
       || '(' || k.source_table || ', ' || k.source_column || ') on base ' || audit_quote(k.base_name) AS detail
FROM described k
JOIN results r ON r.copy_id = k.copy_id
JOIN parts p ON p.part_id = k.part_id
JOIN results other ON other.copy_id = k.other_copy
{_COPY_RECORD}
"""


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the default; a query may return a `severity` column of its own
    summary: str
    sql: str  # the finding columns (see the module's docstring), `severity` (NULL: the default) and `detail`
    prepare: str | None = None  # a temporary table the query reads, made first (once for all rules sharing it)
    references: bool = False  # the query returns a `reference`: the path of the copy a finding compares with


RULES: tuple[Rule, ...] = (
    Rule(
        "uncited-result",
        ERROR,
        "A finished result states numbers (quantitative JSON) and no copy of it carries a citation Part, "
        "typed or probable.",
        UNCITED_RESULT,
    ),
    Rule(
        "invalid-citation",
        ERROR,
        "A citation Part misses a required field, has one null or of the wrong type, "
        "or its base.n is not a positive integer.",
        INVALID_CITATION,
        CITED_PARTS,
    ),
    Rule(
        "citation-type-lost",
        ERROR,
        "A stored copy holds a probable citation (three or more of study, period, base, source) "
        "without the citations media type.",
        CITATION_TYPE_LOST,
        CITED_PARTS,
    ),
    Rule(
        "dropped-part",
        ERROR,
        "A stored copy of a result in a terminal state lacks a Part (by content) that another stored copy "
        "of the same result holds; an error for a citation Part, a warning for any other. What the archiver "
        "could not decode proves nothing either way: no copy is said to lack an undecoded Part, and a copy "
        "holding one, or whose file holds a quarantined record naming its task, is never said to lack "
        "another (it may be the one it seems to lack).",
        DROPPED_PART,
        references=True,
    ),
    Rule(
        "undecoded-part",
        WARNING,
        "A stored Part that no reader could decode (an unknown dialect or SDK object model): stored raw with "
        "kind unknown, named with the keys it had, and left out of dropped-part's comparison.",
        UNDECODED_PART,
    ),
    Rule(
        "card-mode-undeclared",
        WARNING,
        "An agent card declares the Citations v1 extension without listing its media type in an output mode, "
        "or lists the media type without declaring the extension.",
        CARD_MODE_UNDECLARED,
    ),
    Rule(
        "small-base",
        WARNING,
        f"A citation's base.n is below the minimum base (--min-base, default {MIN_BASE}).",
        SMALL_BASE,
        CITED_PARTS,
    ),
    Rule("unreadable-record", ERROR, "A record was quarantined at ingest: it may hide a result.", UNREADABLE_RECORD),
    Rule(
        "unrecognised-record",
        WARNING,
        "A record was read and stored, yet yields neither a result nor a known non-result (agent card, push "
        "configuration, error response, a user's own message, a request, a status-only event): it may hide one.",
        UNRECOGNISED_RECORD,
    ),
    Rule(
        "conflicting-claims",
        WARNING,
        "Two results claim different values (beyond rounding) for the same quantity: the same study, period, "
        "base, weight, source table, column and function, and the same cell (the claim's key, and in a list "
        "of rows the row's labels). Only results resting on a single valid citation are compared.",
        conflicting_claims(),
        references=True,
    ),
    Rule(
        "rerun-differs",
        ERROR,
        "The latest `archiver verify` re-derived a citation's numbers from the data layer and they differ "
        "from the claims of its result.",
        RERUN_DIFFERS,
    ),
    Rule(
        "rerun-partial",
        WARNING,
        "The latest `archiver verify` re-ran a citation over rows that do not cover its fielded window or "
        "cannot reach its base n: whatever they give, the claims are not confirmed.",
        RERUN_PARTIAL,
    ),
    Rule(
        "rerun-unscoped",
        WARNING,
        "The latest `archiver verify` could not narrow the data layer's table to a citation's scope (a fielded "
        "window without a date column): the re-run is not the citation's number, whether or not it agrees.",
        RERUN_UNSCOPED,
    ),
    Rule(
        "not-rerunnable",
        WARNING,
        "The latest `archiver verify` could not re-run a citation: unknown function, missing table or column, "
        "or the extractor failed or timed out.",
        NOT_RERUNNABLE,
    ),
)

RULES_BY_ID = {rule.id: rule for rule in RULES}


def conflicts_among(results: str) -> Rule:
    """`conflicting-claims` over the results `results` chooses (whole quantities: `conflicting_claims`)."""
    return replace(RULES_BY_ID["conflicting-claims"], sql=conflicting_claims(results))


def select_rules(only: tuple[str, ...] | list[str] = (), exclude: tuple[str, ...] | list[str] = ()) -> list[Rule]:
    """The rules to run, in their stable order; an unknown id is refused (`UsageError`)."""
    unknown = [name for name in (*only, *exclude) if name not in RULES_BY_ID]
    if unknown:
        raise UsageError(f"unknown rule {', '.join(unknown)} (known: {', '.join(RULES_BY_ID)})", "--rule")
    return [rule for rule in RULES if (not only or rule.id in only) and rule.id not in exclude]
