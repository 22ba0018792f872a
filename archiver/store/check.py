"""The archive's integrity: every index row rests on stored raw records, no file is half ingested,
the same bytes are stored once.

Each check is one query returning offending rows; a clean archive returns none. Ingest writes a
file version's records and index rows, each naming the version (`source_sha256`), and its `sources`
row last, in one transaction: a row whose version has no `sources` row was written by no committed
ingest, as is a part, citation or claim whose copy or Part is not indexed: `archiver db repair` removes
them (as does an open that replays a WAL or upgrades the schema, see `heal`); the removals are listed by
`healings`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import duckdb

from ..errors import ArchiveError
from . import audit_sums, cells, chunks, counts, kept
from .tables import (
    CHUNKED_COLUMNS,
    CHUNKS_TABLE,
    INDEX_TABLES,
    UNANCHORED,
    UNCOMMITTED,
    chunked,
)

INDEX_SAMPLE = 2_000
"""Results whose kept claim index rows `db check` compares with the definition (a repeatable sample)."""

EXAMPLES = 5
"""Offending rows named per problem; the count covers them all."""


@dataclass(frozen=True)
class Check:
    name: str
    what: str  # the problem, said of the offending rows
    sql: str  # rows: (an example naming one offender, ...)
    repairable: bool = False  # its offenders are rows no committed ingest wrote (`archiver db repair`)


_LINEAGE_RECORDS = """
    SELECT r.*, v.lineage FROM records r JOIN sources v ON v.path = r.source_path AND v.sha256 = r.source_sha256"""
"""Records with the lineage of the version that stored them."""


def _counted(column: str, kept: str) -> str:
    """Source versions whose lineage holds fewer records meeting `kept` than their ingest counted in
    `sources.column`."""
    return f"""
          SELECT s.path || ': ' || s.{column} || ' counted, ' || count(r.record_id) || ' stored'
          FROM sources s LEFT JOIN ({_LINEAGE_RECORDS}) r
            ON r.source_path = s.path AND r.lineage = s.lineage AND {kept} AND r.ingested_at <= s.ingested_at
          WHERE s.alias_of IS NULL GROUP BY s.path, s.sha256, s.{column} HAVING count(r.record_id) < s.{column}"""


CHECKS = (
    Check(
        "record-bytes",
        "stored records whose bytes no longer match their SHA-256",
        """
          SELECT source_path || ': ' || locator FROM records
          WHERE CASE WHEN raw_chunked IS NULL THEN sha256 IS DISTINCT FROM sha256(raw)
                     ELSE raw IS NOT NULL OR raw_chunked <> sha256 END""",
    ),
    Check(
        "chunked-value",
        "values stored in chunks whose chunks are not stored",
        " UNION ALL ".join(
            f"SELECT DISTINCT '{table}.{column}: ' || t.{chunked(column)} FROM {table} t "
            f"WHERE t.{chunked(column)} IS NOT NULL "
            f"AND t.{chunked(column)} NOT IN (SELECT value_sha256 FROM {CHUNKS_TABLE})"
            for table, columns in CHUNKED_COLUMNS.items()
            for column in columns
        ),
    ),
    Check(
        "duplicate-record",
        "record ids stored more than once",
        "SELECT record_id || ' (' || count(*) || 'x)' FROM records GROUP BY record_id HAVING count(*) > 1",
    ),
    Check(
        "missing-records",
        "source versions with fewer stored records than their ingest counted",
        _counted("records", "r.kind <> 'filler'"),
    ),
    Check(
        "missing-quarantine",
        "source versions with fewer quarantined records than their ingest counted",
        _counted("quarantined", "r.status = 'quarantined'"),
    ),
    Check(
        "duplicate-content",
        "the same bytes stored as several source versions (their results count twice)",
        """
          SELECT sha256 || ': ' || string_agg(DISTINCT path, ', ' ORDER BY path) FROM sources
          WHERE alias_of IS NULL AND size > 0 GROUP BY sha256 HAVING count(DISTINCT path) > 1""",
    ),
    Check(
        "alias-target",
        "path aliases naming bytes the archive does not store",
        """
          SELECT a.path || ' -> ' || a.alias_of FROM sources a WHERE a.alias_of IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM sources s WHERE s.alias_of IS NULL AND s.sha256 = a.sha256)""",
    ),
    Check(
        "duplicate-source",
        "source file versions recorded more than once",
        "SELECT path || ' ' || sha256 FROM sources GROUP BY path, sha256 HAVING count(*) > 1",
    ),
    *(
        Check(
            f"uncommitted-{table}",
            f"{table} rows of file versions no committed ingest recorded",
            f"SELECT t.source_path || ': ' || count(*) || ' rows' FROM {table} t "
            f"WHERE {UNCOMMITTED} GROUP BY t.source_path",
            repairable=True,
        )
        for table in INDEX_TABLES
    ),
    Check(
        "result-records",
        "stored copies naming a raw record that is not stored",
        """
          SELECT r.source_path || ': ' || coalesce(r.task_id, r.message_id, r.copy_id) FROM results r
          WHERE len(coalesce(r.record_ids, [])) = 0 OR EXISTS (
              SELECT 1 FROM unnest(r.record_ids) AS u(id) WHERE u.id NOT IN (SELECT record_id FROM records))""",
    ),
    Check(
        "card-record",
        "agent cards whose raw record is not stored",
        "SELECT source_path || ': ' || card_id FROM agent_cards WHERE record_id NOT IN (SELECT record_id FROM records)",
    ),
    Check(
        "error-record",
        "error responses whose raw record is not stored",
        "SELECT source_path || ': ' || record_id FROM rpc_errors "
        "WHERE record_id NOT IN (SELECT record_id FROM records)",
    ),
    Check(
        "duplicate-copy",
        "stored copies indexed more than once",
        "SELECT copy_id || ' (' || count(*) || 'x)' FROM results GROUP BY copy_id HAVING count(*) > 1",
    ),
    Check(
        "part-copy",
        "parts whose stored copy is not indexed",
        f"SELECT t.source_path || ': part ' || t.part_id FROM parts t WHERE {UNANCHORED['parts']}",
        repairable=True,
    ),
    Check(
        "duplicate-part",
        "parts indexed more than once",
        "SELECT part_id || ' (' || count(*) || 'x)' FROM parts GROUP BY part_id HAVING count(*) > 1",
    ),
    Check(
        "citation-part",
        "citations whose Part is not indexed as a citation of the same copy",
        f"SELECT t.source_path || ': part ' || t.part_id FROM citations t WHERE {UNANCHORED['citations']}",
        repairable=True,
    ),
    Check(
        "citation-count",
        "citation Parts with no citation row, or with several",
        """
          SELECT p.source_path || ': part ' || p.part_id FROM parts p
          WHERE p.is_citation AND (SELECT count(*) FROM citations c WHERE c.part_id = p.part_id) <> 1""",
    ),
    Check(
        "claim-part",
        "claims whose Part is not indexed in the same copy",
        f"SELECT t.source_path || ': part ' || t.part_id || ' ' || t.pointer FROM claims t "
        f"WHERE {UNANCHORED['claims']}",
        repairable=True,
    ),
    Check(
        "claim-index",
        f"results (of a sample of {INDEX_SAMPLE:,}) whose kept claim index rows differ from their definition "
        "(`archiver db repair` makes them again)",
        kept.differing(
            f"SELECT result_key FROM (SELECT DISTINCT result_key FROM results) "
            f"USING SAMPLE reservoir({INDEX_SAMPLE} ROWS) REPEATABLE (40)"
        ),
    ),
    Check(
        "kept-counts",
        f"results (of a sample of {INDEX_SAMPLE:,}) whose kept counts differ from their definition "
        "(`archiver db repair` makes them again)",
        counts.differing(
            f"SELECT result_key FROM (SELECT DISTINCT result_key FROM results) "
            f"USING SAMPLE reservoir({INDEX_SAMPLE} ROWS) REPEATABLE (40)"
        ),
    ),
    Check(
        "counts-sum",
        "the archive's kept counts that are not the sum of its results' (`archiver db repair` makes them again)",
        counts.SUMS_DIFFERING,
    ),
    Check(
        "cited-cells",
        "kept cited cells that are not their definition over the claim index (`archiver db repair` makes them again)",
        cells.DIFFERING,
    ),
    Check(
        "audit-sums",
        "the audit summary's kept counts that are not the sums of the kept statuses (`archiver db repair` makes them "
        "again)",
        audit_sums.DIFFERING,
    ),
    Check(
        "duplicate-claim",
        "claims indexed more than once",
        """
          SELECT part_id || ' ' || pointer || ' (' || count(*) || 'x)' FROM claims
          GROUP BY part_id, pointer HAVING count(*) > 1""",
    ),
)


@dataclass
class Problem:
    check: str
    what: str
    count: int
    examples: list[str] = field(default_factory=list)
    repairable: bool = False

    def __str__(self) -> str:
        shown = "; ".join(self.examples)
        more = f"; and {self.count - len(self.examples)} more" if self.count > len(self.examples) else ""
        cure = f" ({REPAIR_HINT})" if self.repairable else ""
        return f"{self.check}: {self.count} {self.what}: {shown}{more}{cure}"


REPAIR_HINT = "`archiver db repair` removes them: no committed ingest wrote them"


def healings(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What opening the archive for writing removed (rows of uncommitted versions), one line each."""
    return [
        f"{at:%Y-%m-%d %H:%M:%S%z}: removed {rows} {table} rows of {path} ({(sha256 or '')[:12]}), "
        "written by no committed ingest"
        for at, table, path, sha256, rows in con.execute(
            "SELECT healed_at, table_name, source_path, source_sha256, rows FROM healed ORDER BY ALL"
        ).fetchall()
    ]


def check(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Every check's problems; an empty list for a consistent archive."""
    problems = []
    for item in CHECKS:
        offenders = [row[0] for row in con.execute(f"SELECT * FROM ({item.sql}) ORDER BY 1").fetchall()]
        if offenders:
            problems.append(Problem(item.name, item.what, len(offenders), offenders[:EXAMPLES], item.repairable))
    offenders = _unsound_values(con)
    if offenders:
        what = "values stored in chunks that are missing chunks or whose bytes no longer match their SHA-256"
        problems.append(Problem("value-chunks", what, len(offenders), offenders[:EXAMPLES]))
    return problems


def _unsound_values(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The values of `value_chunks` whose chunks do not run 0, 1, ... or do not hash to the value's name:
    each value read chunk by chunk (a SQL aggregate would assemble them all in memory at once)."""
    unsound = []
    for (name,) in con.execute(f"SELECT DISTINCT value_sha256 FROM {CHUNKS_TABLE} ORDER BY 1").fetchall():
        digest = hashlib.sha256()
        try:
            for piece in chunks.pieces(con, name):
                digest.update(piece)
        except ArchiveError:
            unsound.append(f"{name} (a chunk is missing)")
            continue
        if digest.hexdigest() != name:
            unsound.append(name)
    return unsound
