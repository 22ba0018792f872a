"""The compiled core's `understand` stage against the Python readers it replaced (`events_of`,
`recorded_events`, `task_of_store_row`, `timestamp_of`), frozen: the decoded JSON the differential tests
generated (A2A objects of every dialect: v0.1, v0.3 JSON-RPC and REST, v1.0 ProtoJSON, JavaScript client
objects, task-store rows, JSON-RPC requests, responses and errors, agent cards, spool envelopes, with
hostile values in every field; timestamps in every form), the explicit edge cases, every record of every
sample and test-corpus file and of the spool segments made of the samples, with the events (or the
quarantine reason) the Python code gave, are in `tests/snapshots/core/understand.jsonl.gz`
(`tests/snapshots/core/make.py` wrote them from the tag `python-normaliser-last`). The core must give
them exactly: the same events, field by field, types and key order included, or the same reason.
"""

from __future__ import annotations

from archiver import _core
from tests.snapshots.core import frozen

SNAPSHOT = frozen.read("understand")


def reason(exc: Exception) -> str:
    """The reason a record is quarantined with (before its whitespace and length are made one line)."""
    if isinstance(exc, (ValueError, TypeError)):
        return str(exc)
    return f"internal error ({type(exc).__name__}: {' '.join(str(exc).split()) or type(exc).__name__})"


def outcome(call, *args) -> list:
    try:
        result = call(*args)
    except RecursionError:
        raise
    except Exception as exc:
        return ["refused", reason(exc)]
    return ["read", result]


def events(value) -> list:
    return outcome(_core.events_of_value, value)


def recorded(given: list) -> list:
    envelope, event = given
    return outcome(_core.recorded_events_of_value, envelope, event)


def store_row(row) -> list:
    return outcome(_core.task_of_store_row_value, row)


def timestamp(value) -> list:
    return outcome(_core.timestamp_of_value, value)


def assert_frozen(test: str, output_of, at_least: int) -> None:
    cases = SNAPSHOT[test]
    assert len(cases) >= at_least, (test, len(cases))
    assert len({frozen.text(case["in"]) for case in cases}) >= 0.9 * len(cases), test
    found = frozen.mismatches(cases, output_of)
    assert not found, "\n".join(found)


# --- generated inputs ---------------------------------------------------------------------------------


def test_events_of_generated_records():
    assert_frozen("records", events, 100)


def test_events_of_every_dialect():
    assert_frozen("dialects", events, 100)


def test_events_of_javascript_client_objects():
    assert_frozen("javascript", events, 100)


def test_recorded_events_of_generated_envelopes():
    assert_frozen("envelopes", recorded, 100)


def test_task_of_generated_store_rows():
    assert_frozen("store_rows", store_row, 100)


def test_timestamp_of_every_form():
    assert_frozen("timestamps", timestamp, 300)


def test_generated_inputs_are_both_read_and_refused():
    """The frozen inputs reach both outcomes (a snapshot of refusals alone would test little)."""
    for test in ("records", "dialects", "javascript", "envelopes", "store_rows"):
        outcomes = {case["out"][0] for case in SNAPSHOT[test] if "out" in case}
        assert outcomes == {"read", "refused"}, test


# --- explicit edge cases ------------------------------------------------------------------------------


def test_events_of_edge_cases():
    assert_frozen("edges", events, 28)


def test_recorded_events_edge_cases():
    assert_frozen("envelope_edges", recorded, 13)


# --- real samples -------------------------------------------------------------------------------------


def test_every_sample_record():
    """Every JSON record and task-store row of the samples and test corpora (as decoded when frozen)."""
    compared = len(SNAPSHOT["samples_events"]) + len(SNAPSHOT["samples_rows"]) + len(SNAPSHOT.get("samples", []))
    assert compared > 100, compared
    assert_frozen("samples_events", events, 100)
    assert_frozen("samples_rows", store_row, 1)
    if "samples" in SNAPSHOT:  # envelopes of spool segments among the samples, where there are any
        assert_frozen("samples", recorded, 1)


def test_every_spool_segment_record_of_the_samples():
    """The records of the spool segments `archiver record` writes of every sample JSON-RPC log and stream."""
    assert_frozen("spool_segments", recorded, 50)
