"""The core's `json` stage against the Python code it replaces: `archiver.read.decode.decode` (values of
equal types, or the same reason), `archiver.canonical` (`compact_json`, `canonical_json`, `content_hash`,
`key_hash`) and Python's `str()` of numbers, on generated JSON, hostile bytes and every record of the
samples."""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from archiver import _core
from archiver.canonical import canonical_json, compact_json, content_hash, key_hash
from archiver.read.containers import SourceFile, read_records
from archiver.read.decode import decode

ROOT = Path(__file__).resolve().parent.parent
# CORE_JSON_EXAMPLES raises the number of examples for a longer search (the default keeps the file fast).
EXAMPLES = int(os.environ.get("CORE_JSON_EXAMPLES", "150"))
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The core reads with the standard library's recursion room of an ingest run from the command line (976
# levels for a payload orjson reads, 971 for one it refuses, as measured). The Python code is called in
# a thread of its own (a fresh stack) at the depth that gives it the same room, under the default
# recursion limit (hypothesis raises it while a test runs), so that payloads nested near Python's
# recursion limit meet the same limit.
DECODE_FRAME_READ = 19
DECODE_FRAME_REFUSED = 21


def _depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _at_depth(payload: bytes, frame: int):
    """`decode(payload)`, called from the frame before `frame` (so that `decode` is at `frame`)."""
    if _depth() + 1 >= frame:
        return decode(payload)
    return _at_depth(payload, frame)


def python_decode(payload: bytes):
    """`decode(payload)` as ("value", v) or ("refused", reason), called at an ingest's stack depth."""
    if payload.count(b"[") + payload.count(b"{") < 900:  # nowhere near the limit: called as it is
        try:
            return ("value", decode(payload))
        except ValueError as exc:
            return ("refused", str(exc))
    outcome: list = []
    try:
        orjson.loads(payload)
        frame = DECODE_FRAME_READ
    except orjson.JSONDecodeError:
        frame = DECODE_FRAME_REFUSED

    def run() -> None:
        try:
            outcome.append(("value", _at_depth(payload, frame)))
        except ValueError as exc:
            outcome.append(("refused", str(exc)))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
    return outcome[0]


def core_decode(payload: bytes):
    try:
        return ("value", _core.decode_json(payload))
    except ValueError as exc:
        return ("refused", str(exc))


def same_value(left, right) -> bool:
    """Equal values of equal types all the way down (1 is not 1.0, -0.0 is not 0.0), keys in order."""
    work = [(left, right)]
    while work:
        a, b = work.pop()
        if type(a) is not type(b):
            return False
        if type(a) is dict:
            if list(a) != list(b):
                return False
            work.extend((a[key], b[key]) for key in a)
        elif type(a) is list:
            if len(a) != len(b):
                return False
            work.extend(zip(a, b))
        elif type(a) is float:
            if struct.pack("<d", a) != struct.pack("<d", b):
                return False
        elif a != b:
            return False
    return True


def assert_decodes_alike(payload: bytes) -> None:
    expected, got = python_decode(payload), core_decode(payload)
    assert expected[0] == got[0], (payload[:200], expected, got)
    if expected[0] == "refused":
        assert got[1] == expected[1], payload[:200]
    else:
        assert same_value(got[1], expected[1]), payload[:200]


def assert_writes_alike(payload: bytes) -> None:
    """compact_json, canonical_json and content_hash of a payload's value, where it decodes."""
    try:
        value = decode(payload)
    except ValueError:
        return
    assert _core.compact_json_of(payload) == compact_json(value)
    assert _core.canonical_json_of(payload) == canonical_json(value)
    assert _core.content_hash_of(payload) == content_hash(value)


# --- generated JSON ---------------------------------------------------------------------------------

EDGE_INTEGERS = [
    2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 2**64, 2**64 + 1,
    -(2**53), -(2**63) + 1, -(2**63), -(2**63) - 1, -(2**64), 10**18, 10**19, 10**20, 10**400 - 1,
]
EDGE_FLOATS = [
    0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    float(2**53), float(2**53 + 2), float(2**63), float(2**64), 1e15, 1e16, 1e-4, 1e-5, 1e-7, 0.1, 1.5e-7,
    123456789012345680.0, 9007199254740993.0, 4210.0, 12.05, 1e22, 1e21, 2.5e-5,
]

integers = st.one_of(st.integers(), st.sampled_from(EDGE_INTEGERS), st.integers(-(10**45), 10**45))
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(EDGE_FLOATS),
    st.integers(-(2**60), 2**60).map(float),
    st.floats(min_value=-1e-300, max_value=1e-300, allow_nan=False),
)
texts = st.text(st.characters(codec="utf-8"), max_size=20) | st.sampled_from(
    ["", '"', "\\", "\\u0000", "\x00\x1f\x7f", "é", "\U0001f600", "\u2028", "1.0", "v1.0.2", "1" * 19, "a.0}"]
)
scalars = st.none() | st.booleans() | integers | floats | texts
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(texts, inner, max_size=5),
    max_leaves=25,
)


def as_text(value, style: int) -> bytes:
    """A JSON text of a value written one of several ways (compact, spaced, indented, ASCII-escaped)."""
    if style == 0:
        return orjson.dumps(value)
    if style == 1:
        return json.dumps(value, ensure_ascii=False).encode()
    if style == 2:
        return json.dumps(value, indent=2).encode()
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()


@FAST
@given(values, st.integers(0, 3))
def test_json_values_decode_and_write_alike(value, style):
    payload = as_text(value, style) if style else _safe_orjson(value)
    assert_decodes_alike(payload)
    assert_writes_alike(payload)


def _safe_orjson(value) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value).encode()


digits = st.text(st.sampled_from("0123456789"), min_size=1, max_size=30)
number_literals = st.builds(
    lambda sign, whole, fraction, exponent: sign + whole + fraction + exponent,
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.integers(1, 10**26).map(str), st.integers(10**300, 10**320).map(str)),
    st.one_of(st.just(""), digits.map(".".__add__)),
    st.one_of(
        st.just(""),
        st.builds(
            lambda e, sign, zeros, n: e + sign + "0" * zeros + str(n),
            st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), st.integers(0, 25), st.integers(0, 9999),
        ),
    ),
)


@FAST
@given(number_literals)
@example("1e16")
@example("1.5e-7")
@example("4.9e-324")
@example("2.4703282292062328e-324")
@example("1.7976931348623158e308")
@example("1.7976931348623159e308")
@example("9" * 309)
@example("-" + "9" * 400)
def test_numbers_decode_write_and_print_alike(literal):
    payload = literal.encode()
    assert_decodes_alike(payload)
    assert_writes_alike(payload)
    assert_decodes_alike(b"[" + payload + b", 1]")
    assert_decodes_alike(b'{"n": ' + payload + b"}")
    try:
        value = decode(payload)
    except ValueError:
        return
    assert _core.python_str_of(payload) == str(value)


@FAST
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_print_as_python_and_orjson_print_them(number):
    payload = repr(number).encode()
    assert _core.python_str_of(payload) == str(number)
    assert _core.compact_json_of(payload) == orjson.dumps(number)


@FAST
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "é", "a\\u0062", ""]), scalars), max_size=8))
def test_repeated_keys_keep_their_first_place_and_last_value(members):
    body = ",".join(f"{_key_text(key)}:{json.dumps(value)}" for key, value in members)
    payload = ("{" + body + "}").encode()
    assert_decodes_alike(payload)
    assert_writes_alike(payload)


def _key_text(key: str) -> str:
    """A key as written: escapes ("a\\u0062") raw, so that "ab" may repeat under another spelling."""
    return '"' + key + '"' if "\\" in key else json.dumps(key)


@FAST
@given(st.lists(st.one_of(st.none(), texts), max_size=6))
def test_key_hash(parts):
    assert _core.key_hash_of(parts) == key_hash(*parts)


# --- hostile bytes ----------------------------------------------------------------------------------


@FAST
@given(st.binary(max_size=60))
def test_random_bytes_are_refused_alike(payload):
    assert_decodes_alike(payload)


@FAST
@given(values, st.integers(0, 3), st.data())
def test_truncations_and_mutations_are_refused_alike(value, style, data):
    payload = as_text(value, style) if style else _safe_orjson(value)
    cut = data.draw(st.integers(0, len(payload)))
    assert_decodes_alike(payload[:cut])
    if payload:
        at = data.draw(st.integers(0, len(payload) - 1))
        byte = data.draw(st.sampled_from(list(b'[]{}",:\\ \n0123456789.eE+-tfnNaIu\x00\x1f\x7f\xc3\xa9\xff')) | st.integers(0, 255))
        mutated = payload[:at] + bytes([byte]) + payload[at + 1 :]
        assert_decodes_alike(mutated)
        assert_decodes_alike(payload[:at] + payload[at + 1 :])
        assert_writes_alike(mutated)


FRAGMENTS = [
    b"NaN", b"-NaN", b"Infinity", b"-Infinity", b"infinity", b"nan", b"1e400", b"-1e400", b"1" * 400,
    b"1" * 19, b"9" * 4301, b'"\\ud800"', b'"\\udc00"', b'"\\ud800\\udc00"', b'"\\uD834\\uDD1E"', b'"\\ud800\\u0041"',
    b'"\\ud800\\uzzzz"', b'"\\ud800\\', b'"\\u12"', b'"\\x"', b'"\xed\xa0\x80"', b'"\xc3"', b"\xff", b"\xef\xbb\xbf",
    b"\x00", b" ", b"\t", b"\r\n", b"[", b"]", b"{", b"}", b",", b":", b'"a"', b"0", b"-0", b"0.0e-0", b"01", b"1.",
    b".5", b"+1", b"true", b"fals", b"nul", b"null", b'"\x01"', b"1e-400", b"1E+00000000000000000000001",
]


@FAST
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8))
def test_hostile_fragments_are_read_alike(fragments):
    for joiner in (b"", b",", b" "):
        payload = joiner.join(fragments)
        assert_decodes_alike(payload)
        assert_decodes_alike(b"[" + payload + b"]")
        assert_decodes_alike(b'{"k":' + payload + b"}")
        assert_writes_alike(b"[" + payload + b"]")


EXPLICIT = [
    b'{"a" 1}', b"[1,]", b'{"a":1,}', b"[01]", b"", b" ", b"[", b'{"a":', b"tru", b"[tx]", b"-", b"[-]", b"1.", b"1e+",
    b"[1.e5]", b"1e400", b"1" * 400, b"-" + b"9" * 4301, b'"\\ud800"', b'"\\udc00"', b'"\\ud800\\u0041"', b'"\\x"',
    b'"\\u12"', b'"a\x01"', b"[1]x", b"\xff", b"[1,]\xff", b"\xef\xbb\xbf[1]", b"\xef\xbb\xbf[NaN]", b"\xef\xbb\xbf",
    b"[1}", b'{"a":1]', b"{1:2}", b"[,1]", b"/*x*/1", b"-Infinity", b"[Infinity]", b"nan", b"\x0b1", b"\x001",
    # the standard library decodes bytes by their byte order mark or NUL bytes (UTF-16, UTF-32)
    '[NaN, "\u614eN"]'.encode("utf-16-le"), '[NaN, "\u614eN"]'.encode("utf-16-be"), '[NaN, "NaN"]'.encode("utf-16"),
    "[NaN]".encode("utf-32"), "[NaN]".encode("utf-32-le") + b"NaN", b"\x00NaN", b"N\x00aN",
    # a repeated key's value replaced, and a lone surrogate with it
    b'{"a": "\\ud800", "a": "NaN"}', b'{"a": "NaN", "a": "\\ud800"}', b'{"\\ud800": 1, "b": "NaN"}',
    b'[' + b"9" * 400 + b', "\\ud83d\\ude00"]', b'[' + b"9" * 400 + b", 1e400]", b"[" + b"9" * 400 + b", NaN]",
    b'["\\ud800", ' + b"9" * 400 + b"]", b"[" + b"9" * 5000 + b"]", b"[" + b"9" * 400 + b", 1.0e-99999]",
]


@pytest.mark.parametrize("payload", EXPLICIT)
def test_explicit_edges_are_read_alike(payload):
    assert_decodes_alike(payload)
    assert_writes_alike(payload)


# --- nesting ----------------------------------------------------------------------------------------


@settings(max_examples=max(EXAMPLES // 3, 40), deadline=None)
@given(
    st.integers(940, 1030),
    st.sampled_from([b"[", b'{"a":', b'[{"k":']),
    st.sampled_from([b"1", b"1234567890123456789", b"NaN", b'"x"', b"1e400", b"", b'"\\ud83d\\ude00", 1' + b"1" * 19]),
    st.booleans(),
)
def test_deep_nesting_near_the_limits(levels, opener, leaf, closed):
    closer = {b"[": b"]", b'{"a":': b"}", b'[{"k":': b"}]"}[opener]
    payload = opener * levels + leaf + (closer * levels if closed else b"")
    assert_decodes_alike(payload)


@pytest.mark.parametrize("count", [600, 638, 639, 700, 1023, 1024, 1025, 1100, 3000])
@pytest.mark.parametrize("shape", [b"[", b"[[", b'{"":[', b"[  "])
def test_pool_exhaustion_is_told_alike(count, shape):
    assert_decodes_alike(shape * count)
    assert_decodes_alike(b"[" + b"1," * count + b"1]")
    assert_decodes_alike(b"[" + b"[]," * count + b"[]]")
    assert_decodes_alike(b'{"a":[' + b'{"":0},' * count + b"0]}")


@FAST
@given(st.binary(max_size=40) | st.text(st.sampled_from('[]{}"\\\nab'), max_size=40).map(str.encode))
@example(b'["[[[", "\\"[", {"\\\n": [[[]]]}]')
def test_nesting_depth_is_the_python_code_s(payload):
    from archiver.read.decode import nesting_depth

    assert _core.nesting_depth_of(payload) == max(nesting_depth(payload), 0)


# --- the samples ------------------------------------------------------------------------------------


def sample_payloads() -> list[bytes]:
    """The JSON text of every record of every file under sample_transcripts/ and tests/ (the envelope
    of a spool segment's record too)."""
    payloads = []
    for folder in ("sample_transcripts", "tests"):
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or path.suffix in {".py", ".pyc", ".md", ".db", ".sqlite", ".duckdb"}:
                continue
            try:
                _, _, records = read_records(SourceFile.on_disk(str(path)))
                for record in records:
                    if record.kind != "json":
                        continue
                    payloads.append(record.payload if record.payload is not None else record.raw)
                    if record.envelope is not None:
                        payloads.append(record.envelope)
            except Exception:  # a file the readers refuse is no sample of JSON
                continue
    return payloads


def test_every_sample_record_decodes_and_writes_alike():
    payloads = sample_payloads()
    assert len(payloads) > 100
    for payload in payloads:
        assert_decodes_alike(payload)
        assert_writes_alike(payload)

