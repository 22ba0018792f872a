"""The core's `json` stage against the Python code it replaced (`archiver.read.decode.decode`: values of
equal types, or the same reason; `archiver.canonical`: `compact_json`, `canonical_json`, `content_hash`,
`key_hash`; Python's `str()` of numbers), frozen: the inputs the differential tests generated (JSON of
every shape written several ways, number literals, repeated keys, hostile bytes, truncations and
mutations, nesting near the limits) and every JSON record of the samples, with that code's outputs, are
in `tests/snapshots/core/json.jsonl.gz` (`tests/snapshots/core/make.py` wrote them from the tag
`python-normaliser-last`). The core's outputs must equal them exactly."""

from __future__ import annotations

import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archiver import _core
from tests.snapshots.core import frozen

EXAMPLES = int(os.environ.get("CORE_JSON_EXAMPLES", "150"))
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SNAPSHOT = frozen.read("json")


def core_decode(payload: bytes) -> list:
    try:
        return ["value", _core.decode_json(payload)]
    except ValueError as exc:
        return ["refused", str(exc)]


def core_write(payload: bytes):
    """compact_json, canonical_json and content_hash of a payload's value, or None where it does not decode."""
    try:
        _core.decode_json(payload)
    except ValueError:
        return None
    return [_core.compact_json_of(payload), _core.canonical_json_of(payload), _core.content_hash_of(payload)]


def core_str(payload: bytes):
    try:
        _core.decode_json(payload)
    except ValueError:
        return None
    return _core.python_str_of(payload)


CHECKS = {"decode": core_decode, "write": core_write, "str": core_str, "depth": _core.nesting_depth_of}


def core_outputs(given: dict) -> dict:
    return {kind: [CHECKS[kind](payload) for payload in payloads] for kind, payloads in given.items()}


def assert_frozen(test: str, output_of=core_outputs, at_least: int = 1) -> None:
    cases = SNAPSHOT[test]
    assert len(cases) >= at_least, (test, len(cases))
    found = frozen.mismatches(cases, output_of)
    assert not found, "\n".join(found)


# --- generated JSON ---------------------------------------------------------------------------------


def test_json_values_decode_and_write_as_python_did():
    assert_frozen("values", at_least=100)


def test_numbers_decode_write_and_print_as_python_did():
    assert_frozen("numbers", at_least=150)


@pytest.mark.slow
@FAST
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_print_as_python_and_orjson_print_them(number):
    payload = repr(number).encode()
    assert _core.python_str_of(payload) == str(number)
    assert _core.compact_json_of(payload) == orjson.dumps(number)


def test_repeated_keys_keep_their_first_place_and_last_value():
    assert_frozen("repeated_keys", at_least=100)


def test_key_hash():
    assert_frozen("key_hash", _core.key_hash_of, at_least=100)


# --- hostile bytes ----------------------------------------------------------------------------------


def test_random_bytes_are_refused_as_python_did():
    assert_frozen("random_bytes", at_least=100)


def test_truncations_and_mutations_are_refused_as_python_did():
    assert_frozen("damaged", at_least=100)


def test_hostile_fragments_are_read_as_python_did():
    assert_frozen("fragments", at_least=100)


def test_explicit_edges_are_read_as_python_did():
    assert_frozen("explicit", at_least=56)


# --- nesting ----------------------------------------------------------------------------------------


def test_deep_nesting_near_the_limits():
    assert_frozen("deep", at_least=40)


def test_pool_exhaustion_is_told_as_python_did():
    assert_frozen("pool", at_least=36)


def test_nesting_depth_is_the_python_code_s():
    assert_frozen("depth", at_least=100)


# --- the samples ------------------------------------------------------------------------------------


def test_every_sample_record_decodes_and_writes_as_python_did():
    assert sum(len(case["in"]["decode"]) for case in SNAPSHOT["samples"]) > 100
    assert_frozen("samples", at_least=10)


@pytest.mark.parametrize("test", sorted(SNAPSHOT))
def test_the_snapshot_cases_are_distinct(test):
    """Each frozen test's cases are many distinct inputs (not one input again and again)."""
    cases = SNAPSHOT[test]
    distinct = {frozen.text(case["in"]) for case in cases}
    assert len(distinct) >= min(len(cases), 30) * 0.8, (test, len(distinct), len(cases))
