"""The archive's integrity: every index row rests on stored raw records, no file is half ingested.

Each check is one query returning offending rows; a clean archive returns none. Ingest writes a
file's records, its index rows and its `sources` row in one transaction, with one `ingested_at`
for all of them, so a record whose (path, ingested_at) names no `sources` row was written by no
committed ingest.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

EXAMPLES = 5
"""Offending rows named per problem; the count covers them all."""


@dataclass(frozen=True)
class Check:
    name: str
    what: str  # the problem, said of the offending rows
    sql: str  # rows: (an example naming one offender, ...)


CHECKS = (
    Check("record-bytes", "stored records whose bytes no longer match their SHA-256",
          "SELECT source_path || ': ' || locator FROM records WHERE sha256 <> sha256(raw)"),
    Check("duplicate-record", "record ids stored more than once",
          "SELECT record_id || ' (' || count(*) || 'x)' FROM records GROUP BY record_id HAVING count(*) > 1"),
    Check("half-ingested", "records written by no committed ingest (a half-ingested file)", """
          SELECT r.source_path || ': ' || count(*) || ' records' FROM records r
          WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.path = r.source_path AND s.ingested_at = r.ingested_at)
          GROUP BY r.source_path"""),
    Check("missing-records", "source files with fewer stored records than their ingest counted", """
          SELECT s.path || ': ' || s.records || ' counted, ' || count(r.record_id) || ' stored' FROM sources s
          LEFT JOIN records r ON r.source_path = s.path AND r.kind <> 'filler' AND r.ingested_at <= s.ingested_at
          GROUP BY s.path, s.sha256, s.records HAVING count(r.record_id) < s.records"""),
    Check("missing-quarantine", "source files with fewer quarantined records than their ingest counted", """
          SELECT s.path || ': ' || s.quarantined || ' counted, ' || count(r.record_id) || ' stored' FROM sources s
          LEFT JOIN records r ON r.source_path = s.path AND r.status = 'quarantined'
                             AND r.ingested_at <= s.ingested_at
          GROUP BY s.path, s.sha256, s.quarantined HAVING count(r.record_id) < s.quarantined"""),
    Check("duplicate-source", "source file versions recorded more than once",
          "SELECT path || ' ' || sha256 FROM sources GROUP BY path, sha256 HAVING count(*) > 1"),
    *(Check(f"{table}-without-source", f"paths with {table} rows but no committed ingest", f"""
          SELECT source_path || ': ' || count(*) || ' rows' FROM {table}
          WHERE source_path NOT IN (SELECT path FROM sources) GROUP BY source_path""")
      for table in ("results", "parts", "citations", "claims", "agent_cards", "rpc_errors")),
    Check("result-records", "stored copies naming a raw record that is not stored", """
          SELECT r.source_path || ': ' || coalesce(r.task_id, r.message_id, r.copy_id) FROM results r
          WHERE len(coalesce(r.record_ids, [])) = 0 OR EXISTS (
              SELECT 1 FROM unnest(r.record_ids) AS u(id) WHERE u.id NOT IN (SELECT record_id FROM records))"""),
    Check("card-record", "agent cards whose raw record is not stored",
          "SELECT source_path || ': ' || card_id FROM agent_cards WHERE record_id NOT IN (SELECT record_id FROM records)"),
    Check("error-record", "error responses whose raw record is not stored",
          "SELECT source_path || ': ' || record_id FROM rpc_errors "
          "WHERE record_id NOT IN (SELECT record_id FROM records)"),
    Check("duplicate-copy", "stored copies indexed more than once",
          "SELECT copy_id || ' (' || count(*) || 'x)' FROM results GROUP BY copy_id HAVING count(*) > 1"),
    Check("part-copy", "parts whose stored copy is not indexed", """
          SELECT source_path || ': part ' || part_id FROM parts p
          WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.copy_id = p.copy_id)"""),
    Check("duplicate-part", "parts indexed more than once",
          "SELECT part_id || ' (' || count(*) || 'x)' FROM parts GROUP BY part_id HAVING count(*) > 1"),
    Check("citation-part", "citations whose Part is not indexed as a citation of the same copy", """
          SELECT c.source_path || ': part ' || c.part_id FROM citations c
          WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.part_id = c.part_id AND p.copy_id = c.copy_id
                            AND p.is_citation)"""),
    Check("citation-count", "citation Parts with no citation row, or with several", """
          SELECT p.source_path || ': part ' || p.part_id FROM parts p
          WHERE p.is_citation AND (SELECT count(*) FROM citations c WHERE c.part_id = p.part_id) <> 1"""),
    Check("claim-part", "claims whose Part is not indexed in the same copy", """
          SELECT c.source_path || ': part ' || c.part_id || ' ' || c.pointer FROM claims c
          WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.part_id = c.part_id AND p.copy_id = c.copy_id
                            AND NOT p.is_citation)"""),
    Check("duplicate-claim", "claims indexed more than once", """
          SELECT part_id || ' ' || pointer || ' (' || count(*) || 'x)' FROM claims
          GROUP BY part_id, pointer HAVING count(*) > 1"""),
)


@dataclass
class Problem:
    check: str
    what: str
    count: int
    examples: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        shown = "; ".join(self.examples)
        more = f"; and {self.count - len(self.examples)} more" if self.count > len(self.examples) else ""
        return f"{self.check}: {self.count} {self.what}: {shown}{more}"


def check(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Every check's problems; an empty list for a consistent archive."""
    problems = []
    for item in CHECKS:
        offenders = [row[0] for row in con.execute(f"SELECT * FROM ({item.sql}) ORDER BY 1").fetchall()]
        if offenders:
            problems.append(Problem(item.name, item.what, len(offenders), offenders[:EXAMPLES]))
    return problems
