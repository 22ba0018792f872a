"""The Citations v1 rules: recognition, every validity rule, probable citations, and claims."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from archiver import _core
from tests.transcripts import CITATIONS_MT, citation


def citation_of(data, media_type):
    """The core's reading of a Part's data under its media type: the citation's fields, or None."""
    found = _core.citation_of_value(data, media_type)
    return None if found is None else SimpleNamespace(**found)


def fielded_dates(fielded):
    """The fielded period's first and last days, as the core reads them from a citation."""
    found = citation_of(citation(fielded=fielded), CITATIONS_MT)
    return found.fielded_start, found.fielded_end


numeric_leaves = _core.numeric_leaves_of_value


def test_typed_valid_citation_is_flattened():
    c = citation_of(citation(extra_field={"a": 1}), CITATIONS_MT)
    assert c.valid
    assert not c.inferred
    assert (c.study, c.period, c.base_name, c.base_n, c.weight) == (
        "Versant Mega Tracker",
        "W6 (April 2026)",
        "Adults 18-74, aware of brand",
        4210.0,
        "main_weight",
    )
    assert (c.source_table, c.source_column, c.source_function) == ("versant_flat", "s14r5", "extractFunnel")
    assert c.warnings == ["Base under 100 in the 65-74 cell"]
    assert str(c.fielded_start) == "2026-04-02"
    assert str(c.fielded_end) == "2026-04-19"
    assert c.extra == '{"extra_field":{"a":1}}'


def test_media_type_with_parameters_and_case_is_recognised():
    assert citation_of(citation(), "Application/VND.upperhand.citations+json; charset=utf-8").valid


@pytest.mark.parametrize(
    ("n", "valid"),
    [
        (4210, True),
        (4210.0, True),
        (1, True),
        (4210.5, False),
        ("4210", False),
        (0, False),
        (-3, False),
        (True, False),
        (None, False),
    ],
)
def test_base_n_must_be_a_positive_integer(n, valid):
    c = citation_of(citation(base={"name": "Adults", "n": n}), CITATIONS_MT)
    assert c.valid is valid, c.problems


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"study": None}, "study is missing"),
        ({"period": 6}, "period is a number, not a string"),
        ({"base": None}, "base is missing"),
        ({"base": {"n": 10}}, "base.name is missing"),
        ({"base": {"name": "A"}}, "base.n is missing"),
        ({"base": "Adults"}, "base is a string, not an object"),
        ({"source": {"table": "t", "column": "c"}}, "source.function is missing"),
        ({"source": {"table": "t", "column": "c", "function": None}}, "source.function is null"),
        ({"source": {"table": "t", "column": 5, "function": "f"}}, "source.column is a number, not a string"),
        ({"study": ""}, "study is empty"),
    ],
)
def test_each_required_field(overrides, problem):
    c = citation_of(citation(**overrides), CITATIONS_MT)
    assert not c.valid
    assert problem in c.problems


def test_optional_fields_of_the_wrong_type_are_problems():
    c = citation_of(citation(weight=1, warnings="small"), CITATIONS_MT)
    assert set(c.problems) == {"weight is a number, not a string", "warnings is not an array of strings"}


def test_typed_citation_that_is_not_an_object():
    c = citation_of([1, 2], CITATIONS_MT)
    assert not c.valid
    assert c.problems == ["citation data is an array, not an object"]


def test_probable_citation_needs_three_of_four_keys():
    assert citation_of(citation(weight=None, fielded=None, warnings=None), None).inferred
    three = citation(source=None)
    assert citation_of(three, None).inferred
    two = citation(source=None, base=None)
    assert citation_of(two, None) is None
    assert citation_of({"share": 0.4}, "application/json") is None


def test_citation_hash_ignores_number_spelling_and_key_order():
    a = citation_of(citation(base={"name": "A", "n": 4210}), CITATIONS_MT)
    b = citation_of(dict(reversed(list(citation(base={"n": 4210.0, "name": "A"}).items()))), CITATIONS_MT)
    assert a.citation_hash == b.citation_hash


def test_fielded_dates():
    assert [str(d) for d in fielded_dates("2026-04-02/2026-04-19")] == ["2026-04-02", "2026-04-19"]
    assert [str(d) for d in fielded_dates("2026-04-02")] == ["2026-04-02", "2026-04-02"]
    assert fielded_dates("spring") == (None, None)


def test_claims_are_numeric_leaves_with_json_pointers():
    data = {
        "total": 4210,
        "share": 0.42,
        "flag": True,
        "label": "3",
        "none": None,
        "segments": [{"name": "18-34", "n": 1210}],
        "a/b": {"~x": 1.5},
    }
    assert dict(numeric_leaves(data)) == {"/total": 4210, "/share": 0.42, "/segments/0/n": 1210, "/a~1b/~0x": 1.5}


def test_a_scalar_data_part_is_one_claim_at_the_root():
    assert list(numeric_leaves(7)) == [("", 7)]
    assert list(numeric_leaves(False)) == []


REWRITTEN = re.compile(rb"[0-9]\.0(?:[,\]}]|$)|[0-9]{19}")
"""What canonical JSON may rewrite, as orjson writes it: an integral float below 1e16 ("4210.0"), an integer of
2**63 or more (19 digits). A "12.05" is neither."""


def test_rewritten_scan_finds_what_the_pattern_finds():
    """The core's scan stands in for `REWRITTEN.search`: the same answer on every text, trailing
    newline, 19-digit runs and ".0" inside strings included."""
    import random

    rewritten = _core.canonical_rewritten

    rng = random.Random(19)
    alphabet = b'0123456789.,]}"a\n'
    for _ in range(20000):
        text = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.3:
            text = text.replace(b"a", b"1" * rng.randint(17, 21), 1)
        assert rewritten(text) == bool(REWRITTEN.search(text)), text
    for text in (b"4210.0", b"[4210.0]", b'{"a":1.0}', b"1.05", b'"x.0"', b"1.0\n", b"9" * 19, b"9" * 18):
        assert rewritten(text) == bool(REWRITTEN.search(text)), text


def test_canonical_json_edge_cases_keep_their_bytes():
    """Bytes the encoder wrote before its fast paths (ids and content hashes are made of them): integers
    beyond 64 bits, integral and huge floats, NaN and infinity, non-ASCII, digits in strings, tuples, depth."""
    canonical_json = _core.canonical_json_of_value

    def key_hash(*parts):
        return _core.key_hash_of(list(parts))

    expected = {
        b'{"a":"9223372036854775808","b":"18446744073709551616","c":"-9223372036854775808",'
        b'"d":"1180591620717411303424","e":1}': {"a": 2**63, "b": 2**64, "c": -(2**63), "d": 2**70, "e": 1.0},
        b"[9223372036854775808,5]": [2**63, 5],
        b"[1e+16,4210,0,9007199254740992,9007199254740994.0,1.5,1e+300,12.05,0]": [
            1e16,
            4210.0,
            -0.0,
            2.0**53,
            2.0**53 + 2,
            1.5,
            1e300,
            12.05,
            0.0,
        ],
        '{"z":3,"é":"Étude Santé","ключ":"\u2028"}'.encode(): {"é": "Étude Santé", "z": 3.0, "ключ": "\u2028"},
        b"[null,null,2]": [float("nan"), float("inf"), 2.0],
        b'{"n":1,"s":"9223372036854775808","t":"x.0"}': {"s": "9223372036854775808", "t": "x.0", "n": 1.0},
        b'{"a":{"x":2,"y":1},"b":[1,2]}': {"b": (1.0, 2), "a": {"y": 1, "x": 2.0}},
    }
    for text, value in expected.items():
        assert canonical_json(value) == text
    deep: object = 1.0
    for _ in range(300):
        deep = [deep]
    assert canonical_json(deep) == b"[" * 300 + b"1" + b"]" * 300
    assert key_hash("a", None, "b") == key_hash("a", "", "b") == "3aa8909cac0696919c2cc255ee0dbcc6"
    assert key_hash("p") == "148de9c5a7a44d19e56cd9ae1a554bf6"
