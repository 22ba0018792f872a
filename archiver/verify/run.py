"""Verify citations: re-derive each cited result's numbers from the data layer and record a verdict.

For every citation of a result in scope (one per result and distinct citation, across its stored
copies) whose study the data layer covers: resolve the source triple in the data layer, run the
declared extractor in a worker process over the rows of the cited period and fielded window, compare
its JSON with the result's claims, and append a row to `verdicts` at once (a verify that is killed
keeps every verdict it finished). An extractor that times out on a table is not run on it again in
the same run. Each run is logged in `verify_runs` as it starts and finishes; after a run that never
finished, the next one resumes by default: a citation whose latest verdict is current (its fingerprint
is the data layer's now) keeps it and is not run again. `status` reads the latest verdicts back without
running anything, and marks those made with a data layer whose tables or extractor have changed since
as stale.
"""

from __future__ import annotations

import hashlib
import math
import os
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import duckdb
import orjson
import pyarrow as pa

from ..cite.stated import as_written, literal_of
from ..query.selection import Selection
from ..store.params import STRINGS, strings
from .compare import ClaimValue, Comparison, differences
from .coverage import Coverage
from .datalayer import DataLayer, Resolution
from .worker import FAILED, OK, CitationContext, Outcome, Worker

REPRODUCED, DIFFERS, NOT_RERUNNABLE = "reproduced", "differs", "not-rerunnable"
PARTIAL, UNSCOPED = "partial", "unscoped"
UNWEIGHTED = ("unweighted", "none")
"""The weights a citation gives for an unweighted base (Citations v1 names "none" its sentinel)."""
VERDICTS = (REPRODUCED, DIFFERS, NOT_RERUNNABLE, PARTIAL, UNSCOPED)
STALE = "stale"
# The verdicts each `--fail-on` level fails on (`stale`: any verdict resting on a changed data layer).
FAILING = {DIFFERS: (DIFFERS,), NOT_RERUNNABLE: (DIFFERS, PARTIAL, UNSCOPED, NOT_RERUNNABLE), STALE: (), "never": ()}

CITATIONS = """
SELECT u.result_key, u.citation_hash, any_value(u.result_kind) AS result_kind, any_value(u.task_id) AS task_id,
       any_value(u.message_id) AS message_id, any_value(u.study) AS study, any_value(u.period) AS period,
       any_value(u.base_name) AS base_name, any_value(u.base_n) AS base_n, any_value(u.weight) AS weight,
       any_value(u.source_table) AS source_table, any_value(u.source_column) AS source_column,
       any_value(u.source_function) AS source_function, any_value(u.fielded_start) AS fielded_start,
       any_value(u.fielded_end) AS fielded_end
FROM citation_uses u
WHERE {where}
GROUP BY u.result_key, u.citation_hash
ORDER BY study NULLS LAST, period NULLS LAST, u.result_key, u.citation_hash
"""

CLAIMS = f"""
SELECT DISTINCT result_key, pointer, literal, value, stated, unit FROM claims
WHERE list_contains({STRINGS}, result_key) ORDER BY result_key, pointer, literal, stated
"""

# Whether the latest run that started has no finish (no row: no run yet).
INTERRUPTED = """
SELECT NOT EXISTS (SELECT 1 FROM verify_runs f WHERE f.event = 'finished' AND f.run_id = s.run_id)
FROM (SELECT run_id FROM verify_runs WHERE event = 'started' ORDER BY logged_at DESC, run_id DESC LIMIT 1) s
"""

# The agent's data Parts of each result (every stored copy's), whose strings may state numbers.
LATEST = f"""
SELECT result_key, citation_hash, verdict, reason, differences, claims, verified_at, fingerprint, extractor,
       data_layer, rows_used, comparison, coverage, inputs
FROM latest_verdicts WHERE list_contains({STRINGS}, result_key)
"""


@dataclass
class CitationVerdict:
    """The verdict on one citation of one result, with what the archive knew of it before."""

    result_key: str
    result_kind: str | None
    task_id: str | None
    message_id: str | None
    citation_hash: str
    study: str | None
    period: str | None
    weight: str | None
    source_table: str | None
    source_column: str | None
    source_function: str | None
    verdict: str | None  # None: never verified (status only)
    reason: str | None = None
    differences: list[dict] = field(default_factory=list)
    claims: int = 0
    rows_used: str | None = None  # the rows the extractor was given, e.g. "rows fielded 2026-04-02..2026-04-19: 4,210"
    comparison: str | None = None  # how the claims were compared, e.g. "as rounded (...)"
    coverage: str | None = None  # how far those rows reach: the window's days, the rows against base n
    verified_at: datetime | None = None
    fingerprint: str | None = None
    stale: bool | None = None  # the verdict rests on another data layer than the current one
    stale_because: str | None = None  # what changed since: the files, the comparison
    previous: str | None = None  # the verdict before this run
    previous_at: datetime | None = None
    previous_stale: bool | None = None
    kept: bool = False  # resumed: its current verdict from an interrupted run was kept, not run again

    def as_dict(self) -> dict:
        value = asdict(self)
        for name in ("verified_at", "previous_at"):
            value[name] = value[name].isoformat() if value[name] else None
        return value


@dataclass
class VerifyReport:
    verdicts: list[CitationVerdict]
    skipped: int  # citations of studies the data layer does not cover
    data_layer: str | None
    data_layer_sha256: str | None
    run_id: str | None  # None: a status report, nothing was run
    verified_at: datetime | None

    @property
    def kept(self) -> int:
        """Verdicts kept from an interrupted run, current and so not run again."""
        return sum(1 for v in self.verdicts if v.kept)

    def count(self, verdict: str) -> int:
        return sum(1 for v in self.verdicts if v.verdict == verdict)

    def fails(self, fail_on: str = DIFFERS) -> bool:
        """Whether a verdict as bad as `fail_on` exists: differs, not-rerunnable (which includes differs and
        the warning-level verdicts) or never."""
        if fail_on == STALE:
            return self.stale > 0
        return any(self.count(verdict) for verdict in FAILING[fail_on])

    @property
    def stale(self) -> int:
        """Verdicts made with a data layer that has changed since (before this run, when one ran)."""
        return sum(1 for v in self.verdicts if (v.previous_stale if self.run_id else v.stale))

    def summary(self) -> dict:
        return {
            "citations": len(self.verdicts),
            **{v: self.count(v) for v in VERDICTS},
            "unverified": self.count(None),
            "stale": self.stale,
            "kept": self.kept,
            "skipped_other_studies": self.skipped,
            "data_layer": self.data_layer,
            "data_layer_sha256": self.data_layer_sha256,
            "run_id": self.run_id,
            "verified_at": self.verified_at.isoformat() if self.verified_at else None,
        }

    def as_dict(self) -> dict:
        return {"verdicts": [v.as_dict() for v in self.verdicts], "summary": self.summary()}


def verify(
    con: duckdb.DuckDBPyConnection,
    layer: DataLayer,
    filters: Selection,
    tolerance: float | None = None,
    timeout: float | None = None,
    resume: bool | None = None,
) -> VerifyReport:
    """Re-run every citation in scope that the data layer covers; append each verdict as it is made;
    report them. `tolerance`, when given, is a relative tolerance for every table. `resume`: keep each
    current verdict instead of running it again (default: when the last run was interrupted)."""
    run_id, now = str(uuid.uuid4()), datetime.now(UTC)
    citations, skipped = _citations(con, layer, filters)
    claims = _claims(con, citations)
    latest = _latest(con, citations)
    layer_sha = layer.fingerprint()
    resume = interrupted(con) if resume is None else resume
    run = _Run(layer.timeout if timeout is None else timeout, layer.periods)
    verdicts = []
    _log_run(con, run_id, "started", now, layer.path)
    with Worker(run.timeout) as worker:
        run.worker = worker
        for row in citations:
            resolution = _resolve(layer, row, None if tolerance is None else Comparison(relative=tolerance))
            last = latest.get((row["result_key"], row["citation_hash"]))
            if resume and last and last["fingerprint"] == _current(layer, resolution, last):
                verdicts.append(_kept(row, last))
                continue
            comparison = resolution.comparison
            outcome = run.outcome(resolution, row)
            coverage = Coverage.of(outcome.coverage)
            verdict_, reason, found = _judge(outcome, claims[row["result_key"]], comparison, coverage, row["base_n"])
            verdict = _verdict(
                row,
                verdict_,
                reason,
                found,
                claims=len(claims[row["result_key"]]),
                verified_at=now,
                fingerprint=_fingerprint(resolution, _loaded(layer, outcome.loaded)),
            )
            verdict.rows_used, verdict.comparison = outcome.rows, comparison.describe()
            verdict.coverage = coverage.describe(row["base_n"]) if coverage else None
            _previous(verdict, last, layer, resolution)
            verdicts.append(verdict)
            inputs = {"files": resolution.files | _loaded(layer, outcome.loaded), "loaded": list(outcome.loaded)}
            _append(
                con,
                [
                    _row(verdict, resolution, comparison, run_id, layer, layer_sha)
                    | {"inputs": orjson.dumps(inputs).decode(), "comparison_given": tolerance is not None}
                ],
            )
    _log_run(con, run_id, "finished", datetime.now(UTC), layer.path)
    return VerifyReport(verdicts, skipped, layer.path, layer_sha, run_id, now)


@dataclass
class _Run:
    """The outcomes of one run: one per citation and resolution, and the (extractor, table) pairs that
    timed out, which are not run again."""

    timeout: float
    periods: dict[str, str] = field(default_factory=dict)  # the data layer's `[periods]`
    worker: Worker | None = None
    outcomes: dict[tuple, Outcome] = field(default_factory=dict)
    timed_out: dict[tuple, str] = field(default_factory=dict)

    def outcome(self, resolution: Resolution, row: dict) -> Outcome:
        key = (row["citation_hash"], resolution.fingerprint)
        if key not in self.outcomes:
            self.outcomes[key] = self._rerun(resolution, row)
        return self.outcomes[key]

    def _rerun(self, resolution: Resolution, row: dict) -> Outcome:
        if resolution.problem:
            return Outcome(FAILED, reason=resolution.problem)
        pair = (resolution.extractor.label(), resolution.table.describe())
        if pair in self.timed_out:
            return Outcome(FAILED, reason=self.timed_out[pair])
        outcome = self.worker.run(resolution.table.spec(), resolution.extractor.spec(), _context(row, self.periods))
        if outcome.timed_out:
            self.timed_out[pair] = (
                f"the extractor {resolution.extractor.label()} did not finish within {self.timeout:g}s on table "
                f"{resolution.table.name!r} earlier in this run; not run on it again"
            )
        return outcome


def _context(row: dict, periods: dict[str, str]) -> CitationContext:
    weight = row["weight"]
    return CitationContext(
        study=row["study"],
        period=row["period"],
        period_as=periods.get(row["period"]),
        weight=None if not weight or weight.strip().lower() in UNWEIGHTED else weight,
        base_name=row["base_name"],
        base_n=row["base_n"],
        table=row["source_table"],
        column=row["source_column"],
        function=row["source_function"],
        fielded_start=row["fielded_start"],
        fielded_end=row["fielded_end"],
    )


def _row(verdict: CitationVerdict, resolution: Resolution, comparison: Comparison, run_id, layer, layer_sha) -> dict:
    return {
        "verified_at": verdict.verified_at,
        "run_id": run_id,
        "result_key": verdict.result_key,
        "citation_hash": verdict.citation_hash,
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "differences": orjson.dumps(verdict.differences).decode() if verdict.differences else None,
        "claims": verdict.claims,
        "tolerance": comparison.relative,
        "absolute_tolerance": comparison.absolute,
        "comparison": verdict.comparison,
        "rows_used": verdict.rows_used,
        "coverage": verdict.coverage,
        "extractor": resolution.extractor.label() if resolution.extractor else None,
        "extractor_version": resolution.extractor_version,
        "table_sha256": resolution.table_sha256,
        "fingerprint": verdict.fingerprint,
        "data_layer": layer.path,
        "data_layer_sha256": layer_sha,
    }


def interrupted(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the latest verify run started and never finished (killed, interrupted, crashed)."""
    row = con.execute(INTERRUPTED).fetchone()
    return bool(row and row[0])


def _log_run(con, run_id: str, event: str, at: datetime, data_layer: str) -> None:
    con.execute("INSERT INTO verify_runs VALUES (?, ?, ?, ?)", [run_id, event, at, data_layer])


def _kept(row: dict, last: dict) -> CitationVerdict:
    """A current verdict of an interrupted run, kept as it is."""
    verdict = _stored(row, last)
    verdict.previous, verdict.previous_at, verdict.previous_stale = last["verdict"], last["verified_at"], False
    verdict.kept = True
    return verdict


def _stored(row: dict, last: dict) -> CitationVerdict:
    verdict = _verdict(
        row, last["verdict"], last["reason"], [], claims=last["claims"], verified_at=None, fingerprint=None
    )
    verdict.rows_used, verdict.comparison, verdict.coverage = last["rows_used"], last["comparison"], last["coverage"]
    verdict.differences = orjson.loads(last["differences"]) if last["differences"] else []
    verdict.verified_at, verdict.fingerprint = last["verified_at"], last["fingerprint"]
    return verdict


def status(con: duckdb.DuckDBPyConnection, layer: DataLayer | None, filters: Selection) -> VerifyReport:
    """The latest verdict of every citation in scope, without running anything. With a data layer:
    only the citations it covers, each marked stale when its table or extractor changed since."""
    citations, skipped = _citations(con, layer, filters)
    latest = _latest(con, citations)
    verdicts = []
    for row in citations:
        last = latest.get((row["result_key"], row["citation_hash"]))
        verdict = _verdict(row, None, None, [], claims=0, verified_at=None, fingerprint=None)
        if last:
            verdict = _stored(row, last)
            if layer is not None:
                resolution = _resolve(layer, row)
                verdict.stale = last["fingerprint"] != _current(layer, resolution, last)
                verdict.stale_because = _changed(layer, resolution, last) if verdict.stale else None
        verdicts.append(verdict)
    return VerifyReport(
        verdicts, skipped, layer.path if layer else None, layer.fingerprint() if layer else None, None, None
    )


def _citations(con, layer: DataLayer | None, filters: Selection) -> tuple[list[dict], int]:
    where, params = filters.where("u.")
    cursor = con.execute(CITATIONS.format(where=where), params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=False)) for values in cursor.fetchall()]
    covered = [row for row in rows if layer is None or layer.covers(row["study"])]
    return covered, len(rows) - len(covered)


def _claims(con, citations: list[dict]) -> dict[str, list[ClaimValue]]:
    """Each result's claims (the `claims` table): the numeric leaves of its data Parts, and the numbers
    they state as strings ("35%", "1,210", "€1,250")."""
    found: dict[str, list[ClaimValue]] = defaultdict(list)
    keys = sorted({row["result_key"] for row in citations})
    for result_key, pointer, literal, value, written, unit in con.execute(CLAIMS, [strings(keys)]).fetchall():
        found[result_key].append(ClaimValue(pointer, literal, value, written, unit))
    return found


def _latest(con, citations: list[dict]) -> dict[tuple[str, str], dict]:
    cursor = con.execute(LATEST, [strings(sorted({row["result_key"] for row in citations}))])
    names = [d[0] for d in cursor.description]
    return {(row[0], row[1]): dict(zip(names, row, strict=False)) for row in cursor.fetchall()}


def _resolve(layer: DataLayer, row: dict, comparison: Comparison | None = None) -> Resolution:
    return layer.resolve(
        row["study"], row["period"], row["source_table"], row["source_column"], row["source_function"], comparison
    )


def _judge(
    outcome: Outcome, claims: list[ClaimValue], comparison: Comparison, coverage: Coverage | None, base_n
) -> tuple[str, str | None, list[dict]]:
    """(verdict, reason, differences). A scope that could not be applied makes the verdict `unscoped`, and
    rows that fall short of the citation's window or base n make it `partial`, whatever the claims: the
    rows re-derive another sample's numbers."""
    if outcome.status != OK:
        return NOT_RERUNNABLE, outcome.reason, []
    if not claims:
        return NOT_RERUNNABLE, "the result states no numbers to compare", []
    found = differences(claims, outcome.value, comparison)
    agreed = f"{len(claims) - len(found)} of {len(claims)} claims agree over these rows"
    agreed += f"; {_differing(found, claims)}" if found else ""
    if coverage and coverage.unscoped:
        return UNSCOPED, f"{coverage.unscoped}; {agreed}", found
    shortfall = coverage.shortfall(base_n) if coverage else None
    if shortfall:
        return PARTIAL, f"{shortfall}; {agreed}", found
    if not found:
        return REPRODUCED, None, []
    return DIFFERS, _differing(found, claims), found


def _for_people(difference: dict) -> str:
    """A re-derived number as a person reads it, to a decimal more than the claim was written
    (`cite.stated.as_written`: 0.415, not 0.41510322261717025); the differences keep it exact."""
    value, claimed = difference["rerun"], difference["claimed"]
    if not isinstance(value, float) or value.is_integer() or not math.isfinite(value):
        return repr(value)
    return as_written(value, claimed if isinstance(claimed, str) else literal_of(claimed))


def _differing(found: list[dict], claims: list[ClaimValue]) -> str:
    """`1 of 5 claims differ; /segments/0/share: claimed 0.47, re-derived 0.415`, the scale cause first."""
    first = found[0]
    rerun = "nothing" if first.get("note") and first["rerun"] is None else _for_people(first)
    if first.get("note", "").startswith("the extractor returned"):
        rerun = f"{first['rerun']} ({first['note']})"
    scale = next((d["note"] for d in found if d.get("note", "").startswith("scale:")), None)
    return (
        (f"{scale}; " if scale else "")
        + f"{len(found)} of {len(claims)} claims differ; {first['pointer'] or '(value)'}: "
        + f"claimed {first['claimed']!r}, re-derived {rerun}"
    )


# The fields of a verdict that are the citation row's own.
_CITATION_FIELDS = (
    "result_key",
    "result_kind",
    "task_id",
    "message_id",
    "citation_hash",
    "study",
    "period",
    "weight",
    "source_table",
    "source_column",
    "source_function",
)


def _verdict(row: dict, verdict, reason, found, *, claims: int, verified_at, fingerprint) -> CitationVerdict:
    return CitationVerdict(
        **{name: row[name] for name in _CITATION_FIELDS},
        verdict=verdict,
        reason=reason,
        differences=found,
        claims=claims,
        verified_at=verified_at,
        fingerprint=fingerprint,
    )


def _previous(verdict: CitationVerdict, last: dict | None, layer: DataLayer, resolution: Resolution) -> None:
    if last:
        verdict.previous, verdict.previous_at = last["verdict"], last["verified_at"]
        verdict.previous_stale = last["fingerprint"] != _current(layer, resolution, last)


def _fingerprint(resolution: Resolution, loaded: dict[str, str]) -> str:
    """What a verdict rests on: the resolution's fingerprint and, when the extractor imported modules of
    the project while it ran, their contents."""
    if not loaded:
        return resolution.fingerprint
    return hashlib.sha256(orjson.dumps([resolution.fingerprint, sorted(loaded.items())])).hexdigest()


def _loaded(layer: DataLayer, paths) -> dict[str, str]:
    return {path: layer.file_sha(path) or "missing" for path in paths}


def _stored_inputs(last: dict) -> dict:
    inputs = last.get("inputs")
    return (orjson.loads(inputs) if isinstance(inputs, (str, bytes)) else inputs) or {}


def _current(layer: DataLayer, resolution: Resolution, last: dict) -> str:
    """The fingerprint a stored verdict would have now: the resolution's, with the modules it loaded."""
    return _fingerprint(resolution, _loaded(layer, _stored_inputs(last).get("loaded", [])))


def _changed(layer: DataLayer, resolution: Resolution, last: dict) -> str:
    """What changed since a stale verdict was made: its files that changed or are gone, the files its
    declared inputs match now and did not then, the comparison; else the data layer's declarations."""
    files = _stored_inputs(last).get("files", {})
    changed = [path for path, digest in files.items() if layer.file_sha(path) != digest]
    added = [path for path in resolution.files if files and path not in files]
    said = [f"{_shown(layer, p)} changed" for p in changed] + [f"{_shown(layer, p)} is new" for p in added]
    if last["comparison"] and last["comparison"] != resolution.comparison.describe():
        said.append(f"compared {last['comparison']}, now {resolution.comparison.describe()}")
    return "; ".join(said) or "the data layer's declarations changed"


def _shown(layer: DataLayer, path: str) -> str:
    """A path relative to the data layer's folder when it is inside it."""
    relative = os.path.relpath(path, os.path.dirname(layer.path))
    return path if relative.startswith("..") else relative


def _append(con, rows: list[dict]) -> None:
    if not rows:
        return
    batch = pa.Table.from_pylist(rows)
    con.register("_verdicts_batch", batch)
    try:
        con.execute("INSERT INTO verdicts BY NAME SELECT * FROM _verdicts_batch")
    finally:
        con.unregister("_verdicts_batch")
