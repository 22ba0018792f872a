"""Which stored copies, agent cards and quarantined records an audit reports on.

The filters become three temporary tables (`audit_copies`, `audit_cards`,
`audit_records`) that every rule reads; filter values are always bound
parameters. A filter that cannot be judged for a subject excludes it: an agent
card has no study or time, a quarantined record no study or time.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

_GLOB_CHARS = frozenset("*?[")


def parse_moment(text: str, end_of_day: bool = False) -> datetime:
    """An ISO-8601 date or timestamp; a bare date means its start (or, for an upper bound, its end).

    Naive timestamps are UTC. Raises ValueError on anything else.
    """
    text = text.strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    start = datetime.combine(day, time(), tzinfo=timezone.utc)
    return start + timedelta(days=1) if end_of_day else start


@dataclass
class Scope:
    """The audit's filters. Empty means everything in the archive."""

    agent: str | None = None
    study: str | None = None
    since: datetime | None = None
    until: datetime | None = None  # exclusive
    sources: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        return {"agent": self.agent, "study": self.study,
                "since": self.since.isoformat() if self.since else None,
                "until": self.until.isoformat() if self.until else None,
                "source": list(self.sources)}

    def materialize(self, con: duckdb.DuckDBPyConnection) -> None:
        """(Re)create the scope tables on this connection."""
        params: dict = {}
        copies = self._source_conditions("r.source_path", params)
        cards = self._source_conditions("c.source_path", params)
        records = self._source_conditions("rec.source_path", params)
        timeless = self.study is not None or self.since is not None or self.until is not None
        if self.agent is not None:
            params["agent"] = self.agent
            copies.append("lower(a.agent) = lower($agent)")
            cards.append("lower(c.name) = lower($agent)")
            records.append("""lower($agent) IN (
                SELECT lower(c.name) FROM agent_cards c
                WHERE c.source_path = rec.source_path
                   OR c.source_dir = regexp_replace(rec.source_path, '/[^/]*$', ''))""")
        if self.study is not None:
            params["study"] = self.study
            copies.append("r.result_key IN (SELECT x.result_key FROM citations x WHERE lower(x.study) = lower($study))")
        if self.since is not None:
            params["since"] = self.since
            copies.append("r.timestamp >= $since")
        if self.until is not None:
            params["until"] = self.until
            copies.append("r.timestamp < $until")
        if timeless:
            cards.append("false")
            records.append("false")
        records.append("rec.status = 'quarantined'")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE audit_copies AS SELECT r.copy_id FROM results r "
            f"JOIN result_agents a ON a.copy_id = r.copy_id WHERE {_all(copies)}", _used(params, copies))
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE audit_cards AS SELECT c.card_id FROM agent_cards c WHERE {_all(cards)}",
            _used(params, cards))
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE audit_records AS SELECT rec.record_id FROM records rec WHERE {_all(records)}",
            _used(params, records))

    def _source_conditions(self, column: str, params: dict) -> list[str]:
        if not self.sources:
            return []
        alternatives = []
        for given in self.sources:
            pattern, is_glob = source_pattern(given)
            name = f"source{len(params)}"
            params[name] = pattern
            if is_glob:
                alternatives.append(f"{column} GLOB ${name}")
            else:
                alternatives.append(f"({column} = ${name} OR starts_with({column}, ${name} || '/'))")
        return ["(" + " OR ".join(alternatives) + ")"]


def source_pattern(given: str) -> tuple[str, bool]:
    """A --source value as stored paths are written (absolute), and whether it is a glob.

    A plain path matches that file or anything under that directory.
    """
    if given in ("-", "<stdin>"):
        return "<stdin>", False
    is_glob = any(char in _GLOB_CHARS for char in given)
    if is_glob and given.startswith("*"):
        return given, True
    return os.path.abspath(given), is_glob


def _all(conditions: list[str]) -> str:
    return " AND ".join(conditions) or "true"


def _used(params: dict, conditions: list[str]) -> dict:
    text = " ".join(conditions)
    return {name: value for name, value in params.items() if re.search(rf"\${name}\b", text)}
