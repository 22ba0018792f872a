"""Which stored copies, agent cards and quarantined records an audit reports on.

The filters are the query commands' own (`archiver.query.filters.Filters`: a value
matches exactly unless it holds `*`; a bare `until` date includes that day), plus
`--source`. They become three temporary tables (`audit_copies`, `audit_cards`,
`audit_records`) and the macro `audit_copy_in_scope(copy_id)` that every rule reads
(TRUE without a filter on copies, so an unfiltered audit reads no scope table); filter
values are always bound parameters. A filter that cannot be judged for a subject excludes it: an agent
card or a quarantined record has no study and no time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING

from ..query.filters import Filters, Strings
from ..read.containers import shown

if TYPE_CHECKING:
    import duckdb

_GLOB_CHARS = frozenset("*?[")

COPIES = """
CREATE OR REPLACE TEMP TABLE audit_copies AS
SELECT x.copy_id
FROM (SELECT r.copy_id, r.result_key, r.task_id, r.timestamp, r.source_path, r.source_sha256, a.agent
      FROM results r JOIN result_agents a ON a.copy_id = r.copy_id) x
WHERE {where}"""

CARDS = """
CREATE OR REPLACE TEMP TABLE audit_cards AS
SELECT x.card_id FROM (SELECT card_id, source_path, source_sha256, name AS agent FROM agent_cards) x WHERE {where}"""

RECORDS = """
CREATE OR REPLACE TEMP TABLE audit_records AS
SELECT x.record_id FROM records x WHERE x.status = 'quarantined' AND {where}"""

# Whether a stored copy is in scope, when a filter applies to copies (else every copy is).
IN_SCOPE = "id IN (SELECT s.copy_id FROM audit_copies s)"

# The agent of a quarantined record: an agent card in the same file, else in the same directory.
RECORD_AGENT = """EXISTS (
    SELECT 1 FROM (SELECT name AS agent, source_path, source_dir FROM agent_cards) c
    WHERE (c.source_path = x.source_path OR c.source_dir = regexp_replace(x.source_path, '/[^/]*$', ''))
      AND {where})"""


@dataclass
class Scope:
    """The audit's filters. Empty means everything in the archive."""

    agent: Strings = None
    study: Strings = None
    since: str | datetime | date | None = None
    until: str | datetime | date | None = None
    sources: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        def plain(value):
            if value is None or isinstance(value, str):
                return value
            return value.isoformat() if isinstance(value, (date, datetime)) else list(value)

        return {
            "agent": plain(self.agent),
            "study": plain(self.study),
            "since": plain(self.since),
            "until": plain(self.until),
            "source": [shown(given) for given in self.sources],
        }

    def materialize(self, con: duckdb.DuckDBPyConnection) -> None:
        """(Re)create the scope tables and the `audit_copy_in_scope` macro on this connection."""
        timeless = self.study is not None or self.since is not None or self.until is not None
        copies = self._copies()
        for template, conditions in (
            (COPIES, copies),
            (CARDS, self._cards(timeless)),
            (RECORDS, self._records(timeless)),
        ):
            if template is COPIES and not copies:
                continue
            con.execute(
                template.format(where=" AND ".join(c for c, _ in conditions) or "TRUE"),
                [value for _, values in conditions for value in values],
            )
        con.execute(f"CREATE OR REPLACE TEMP MACRO audit_copy_in_scope(id) AS {IN_SCOPE if copies else 'TRUE'}")

    def _copies(self) -> list[tuple[str, list]]:
        if self.agent is None and self.since is None and self.until is None:
            return [*self._studies(), *self._sources()]
        return [
            Filters.of(agent=self.agent, since=self.since, until=self.until).where("x.", scope="copy"),
            *self._studies(),
            *self._sources(),
        ]

    def _studies(self) -> list[tuple[str, list]]:
        if self.study is None:
            return []
        where, params = Filters.of(study=self.study).where("c.", scope="citation")
        return [(f"x.result_key IN (SELECT c.result_key FROM citations c WHERE {where})", params)]

    def _cards(self, timeless: bool) -> list[tuple[str, list]]:
        if timeless:
            return [("FALSE", [])]
        return [Filters.of(agent=self.agent).where("x.", scope="copy"), *self._sources()]

    def _records(self, timeless: bool) -> list[tuple[str, list]]:
        if timeless:
            return [("FALSE", [])]
        conditions = self._sources()
        if self.agent is not None:
            where, params = Filters.of(agent=self.agent).where("c.", scope="copy")
            conditions.append((RECORD_AGENT.format(where=where), params))
        return conditions

    def _sources(self) -> list[tuple[str, list]]:
        """Rows stored from the given paths, or stored under another path from the same bytes (a path
        alias: a copied, moved or symlinked dump is audited as the files it holds)."""
        if not self.sources:
            return []
        direct, params = _path_match("x.source_path", self.sources)
        aliased, alias_params = _path_match("a.path", self.sources)
        condition = (
            f"({direct} OR EXISTS (SELECT 1 FROM sources a WHERE a.alias_of = x.source_path "
            f"AND a.sha256 = x.source_sha256 AND {aliased}))"
        )
        return [(condition, params + alias_params)]


def _path_match(column: str, given: tuple[str, ...]) -> tuple[str, list]:
    alternatives, params = [], []
    for value in given:
        pattern, is_glob = source_pattern(value)
        if is_glob:
            alternatives.append(f"{column} GLOB ?")
            params.append(pattern)
        else:
            alternatives.append(f"({column} = ? OR starts_with({column}, ?))")
            params += [pattern, pattern.rstrip("/") + "/"]
    return "(" + " OR ".join(alternatives) + ")", params


def source_pattern(given: str) -> tuple[str, bool]:
    """A --source value as stored paths are written (absolute), and whether it is a glob.

    A relative value is taken from the working directory; a plain path matches that file or
    anything under that directory; a glob starting with `*` is used as given. Bytes of a name that
    are not UTF-8 are written as ingest archived them (\\xNN).
    """
    if given in ("-", "<stdin>"):
        return "<stdin>", False
    is_glob = any(char in _GLOB_CHARS for char in given)
    if is_glob and given.startswith("*"):
        return shown(given), True
    return shown(os.path.abspath(given)), is_glob
