"""The SQL the archive's views, the audit's rules, `stats` and the kept counts' definition run, kept as files under
`tests/snapshots/sql/` (as ibis keeps its compiled SQL): a change to a view or a rule, a speed-up included,
shows its SQL as a diff in review, and this test fails until the snapshot is rewritten on purpose:

    ARCHIVER_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_sql_snapshots.py

The SQL is compared exactly as it runs (the Python that builds it expanded), one statement a file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from archiver.audit.rules import RULES
from archiver.audit.wording import MACROS
from archiver.store.counts import result_counts
from archiver.store.views import STAT_QUERIES, VIEWS

SNAPSHOTS = Path(__file__).parent / "snapshots" / "sql"
UPDATE = os.environ.get("ARCHIVER_UPDATE_SNAPSHOTS") == "1"


def statements() -> dict[str, str]:
    """Each statement by its snapshot's path under `SNAPSHOTS`."""
    found = {f"views/{name}.sql": sql for name, sql in VIEWS.items()}
    for rule in RULES:
        found[f"rules/{rule.id}.sql"] = rule.sql
        if rule.prepare:  # a temporary table the rules sharing it read, made once
            table = re.search(r"TEMP TABLE (\w+)", rule.prepare).group(1)
            found[f"rules/tables/{table}.sql"] = rule.prepare
    for name, (params, body) in MACROS.items():
        found[f"rules/macros/{name}.sql"] = f"CREATE OR REPLACE TEMP MACRO {name}({params}) AS {body}"
    found.update({f"stats/{name}.sql": sql for name, sql in STAT_QUERIES.items()})
    found["kept/result_counts.sql"] = result_counts("result_key IN (SELECT result_key FROM chosen)")
    return found


def written(sql: str) -> str:
    """The statement as its file holds it: trailing blanks gone, one newline at the end."""
    return "\n".join(line.rstrip() for line in sql.strip("\n").splitlines()) + "\n"


@pytest.mark.parametrize("name", sorted(statements()))
def test_the_sql_is_its_snapshot(name):
    snapshot = SNAPSHOTS / name
    sql = written(statements()[name])
    if UPDATE:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(sql, encoding="utf-8")
    assert snapshot.exists(), f"{name}: no snapshot; write it with ARCHIVER_UPDATE_SNAPSHOTS=1"
    assert snapshot.read_text(encoding="utf-8") == sql, f"{name} changed: review the diff, then rewrite the snapshot"


def test_no_snapshot_is_left_of_a_statement_that_is_gone():
    kept = {str(path.relative_to(SNAPSHOTS)) for path in SNAPSHOTS.rglob("*.sql")}
    assert kept == set(statements())
