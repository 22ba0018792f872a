"""Hostile JSON values: deep nesting, huge integers, NaN and Infinity, duplicate keys, a 200 MB line."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from archiver.store import chunks
from tests.stored import WHOLE_RECORDS
from tests.transcripts import jsonrpc_result, rows, v1_cited_parts, v1_task

from .cases import assert_quarantine, good, ingest, quarantined_raw, tasks


def with_data(number: int, data_json: bytes) -> bytes:
    """A cited task whose quantitative data Part is the given JSON text, spliced in verbatim."""
    marker = {"marker": True}
    text = orjson.dumps(jsonrpc_result({"task": v1_task(f"t{number}", v1_cited_parts(marker))}))
    return text.replace(orjson.dumps(marker), data_json)


@pytest.mark.slow
def test_arrays_nested_100000_deep(archive, write):
    deep = b"[" * 100_000 + b"]" * 100_000
    path = write("deep.jsonl", good(1) + b"\n" + deep + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    reason = "invalid JSON: nested deeper than 1024 levels: line 1 column 1025 (byte 1024)"
    assert_quarantine(archive, summary, path, [("line 2", reason)])
    assert quarantined_raw(archive, path) == [deep + b"\n"]
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_objects_nested_100000_deep_inside_a_part(archive, write):
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    line = with_data(2, deep)
    path = write("deep.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [  # the 1025th level in all, the Part's 1018th
            ("line 2", "invalid JSON: nested deeper than 1024 levels: line 1 column 5304 (byte 5303)")
        ],
    )
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [254, 1000])
def test_a_part_nested_past_orjsons_writing_limit_is_stored(archive, write, depth):
    """orjson reads 1024 levels but writes 254: the Part's hash and JSON text are written without it."""
    deep = b'{"a":' * depth + b"1" + b"}" * depth
    path = write("deep.jsonl", good(1) + b"\n" + with_data(2, deep) + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2", "t3"]
    assert rows(
        archive, "SELECT data FROM parts WHERE result_key = 'task:t2' AND kind = 'data' AND NOT is_citation"
    ) == [(deep.decode(),)]
    assert rows(archive, "SELECT pointer, literal FROM claims WHERE result_key = 'task:t2'") == [("/a" * depth, "1")]
    assert f"   {'.'.join('a' * depth)}  1\n" in archive.render("t2")  # `show` walks the Part as deep as it is stored


@pytest.mark.slow
def test_an_agent_card_nested_1000_deep_is_stored(archive, write):
    card = {"name": "deep agent", "url": "http://agent", "capabilities": {"extensions": [], "x": 0}, "skills": []}
    deep = b"[" * 1000 + b"]" * 1000
    path = write("card.jsonl", orjson.dumps(card).replace(b'"x":0', b'"x":' + deep) + b"\n" + good(2) + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t2"]
    assert rows(
        archive, "SELECT name, json_extract(card, '$.capabilities.x') = ? FROM agent_cards", [deep.decode()]
    ) == [("deep agent", True)]


@pytest.mark.slow
def test_an_integer_beyond_64_bits_nested_1017_deep_is_stored_exactly(archive, write):
    """One nesting limit for every record: an integer beyond 64 bits changes nothing of it (the Python code
    this replaced refused such a record past some 976 levels, where its recursion ran out)."""
    deep = b'{"a":' * 1010 + b"18446744073709551616" + b"}" * 1010
    line = with_data(2, deep)
    path = write("deep-big.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)  # 1010 levels in the Part, 7 around it: response, result, task, artifacts, ...
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2", "t3"]
    query = "SELECT pointer, literal FROM claims WHERE result_key = 'task:t2'"
    assert rows(archive, query) == [("/a" * 1010, "18446744073709551616")]


HUGE, NEGATIVE = "9" * 5001, "-" + "1" * 20000


@pytest.mark.slow
@pytest.mark.parametrize(
    ("data", "claims"),
    [
        (
            b'{"big": 18446744073709551616, "negative": -9223372036854775809, "huge": 1' + b"0" * 400 + b"}",
            [
                ("/big", "18446744073709551616", 1.8446744073709552e19),
                ("/huge", "1" + "0" * 400, None),  # beyond a double: the literal alone holds it
                ("/negative", "-9223372036854775809", -9.223372036854776e18),
            ],
        ),
        (  # quarantined as "number is infinity when parsed as double" past Python's 4,300 digits (issue 39)
            f'{{"huge": {HUGE}, "negative": {NEGATIVE}, "small": 7}}'.encode(),
            [("/huge", HUGE, None), ("/negative", NEGATIVE, None), ("/small", "7", 7.0)],
        ),
    ],
    ids=["beyond 64 bits", "of any length"],
)
def test_integers_beyond_64_bits_are_kept_exactly(archive, write, data, claims):
    path = write("big.jsonl", good(1) + b"\n" + with_data(2, data) + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    query = "SELECT pointer, literal, value FROM claims WHERE result_key = 'task:t2' ORDER BY pointer"
    assert rows(archive, query) == claims


@pytest.mark.slow
def test_nan_is_quarantined_by_name(archive, write):
    line = with_data(2, b'{"share": NaN}')
    path = write("nan.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    column = line.index(b"NaN") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [("line 2", f"invalid JSON: NaN is not a JSON number: line 1 column {column} (byte {column - 1})")],
    )
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_infinity_and_minus_infinity_are_quarantined_by_name(archive, write):
    path = write(
        "inf.jsonl",
        good(1)
        + b"\n"
        + with_data(2, b'{"a": Infinity}')
        + b"\n"
        + with_data(3, b'{"a": [1, -Infinity]}')
        + b"\n"
        + good(4)
        + b"\n",
    )
    summary = ingest(archive, path)
    at = with_data(2, b'{"a": Infinity}').index(b"Infinity"), with_data(3, b'{"a": [1, -Infinity]}').index(b"-Infinity")
    assert_quarantine(
        archive,
        summary,
        path,
        [
            ("line 2", f"invalid JSON: Infinity is not a JSON number: line 1 column {at[0] + 1} (byte {at[0]})"),
            ("line 3", f"invalid JSON: -Infinity is not a JSON number: line 1 column {at[1] + 1} (byte {at[1]})"),
        ],
    )
    assert tasks(archive, path) == ["t1", "t4"]


@pytest.mark.slow
def test_a_float_beyond_a_double_is_quarantined(archive, write):
    line = with_data(2, b'{"a": 1e400}')
    path = write("overflow.jsonl", good(1) + b"\n" + line + b"\n")
    summary = ingest(archive, path)
    column = line.index(b"1e400") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "line 2",
                f"invalid JSON: a number beyond the range of a double: line 1 column {column} (byte {column - 1})",
            )
        ],
    )
    assert tasks(archive, path) == ["t1"]


@pytest.mark.slow
def test_a_lone_surrogate_escape_is_quarantined(archive, write):
    line = with_data(2, b'{"label": "\\ud800", "n": 1}')
    path = write("surrogate.jsonl", line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    column = line.index(b"\\ud800") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "line 1",
                f"invalid JSON: a lone surrogate (\\ud800) in a string, not one of a pair: "
                f"line 1 column {column} (byte {column - 1})",
            )
        ],
    )
    assert tasks(archive, path) == ["t3"]


@pytest.mark.slow
def test_a_task_id_nested_1000_deep_is_read_as_its_text(archive, write):
    """An id is text: one nested 1000 deep is Python's `str()` of it, as any id that is not a string (the Python
    reader refused it only because its recursion ran out, at a depth that moved with its caller's stack)."""
    line = good(2).replace(b'"id":"t2"', b'"id":' + b"[" * 1000 + b'"t2"' + b"]" * 1000)
    path = write("deep-id.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert sorted(tasks(archive, path)) == sorted(["t1", "[" * 1000 + "'t2'" + "]" * 1000, "t3"])


@pytest.mark.slow
def test_a_lone_surrogate_after_an_integer_beyond_a_double_is_quarantined(archive, write):
    """The integer is kept, the string cannot be: a lone surrogate is no UTF-8 text (the line alone is refused)."""
    line = with_data(2, b'{"huge": 1' + b"0" * 400 + b', "label": "\\ud800", "pair": "\\ud83d\\ude00"}')
    path = write("surrogate-big.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    column = line.index(b"\\ud800") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "line 2",
                f"invalid JSON: a lone surrogate (\\ud800) in a string, not one of a pair: "
                f"line 1 column {column} (byte {column - 1})",
            )
        ],
    )
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_duplicate_keys_last_wins_and_raw_keeps_both(archive, write):
    line = with_data(2, b'{"share": 0.1, "share": 0.42}')
    path = write("dup.jsonl", good(1) + b"\n" + line + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert rows(archive, "SELECT pointer, literal FROM claims WHERE result_key = 'task:t2'") == [("/share", "0.42")]
    assert rows(archive, f"SELECT raw FROM {WHOLE_RECORDS} AS records WHERE line = 2") == [(line + b"\n",)]


@pytest.mark.slow
def test_a_single_200_mb_line_is_stored_whole(archive, tmp_path):
    """Written in 1 MiB pieces; the test itself never holds the line."""
    path = tmp_path / "huge.jsonl"
    head = (
        b'{"jsonrpc":"2.0","id":9,"result":{"kind":"message","messageId":"huge","role":"agent",'
        b'"contextId":"c","parts":[{"kind":"text","text":"'
    )
    digest, size = hashlib.sha256(), 0
    with open(path, "wb") as handle:
        handle.write(good(1) + b"\n")
        for piece in (head, *[b"x" * 2**20] * 200, b'"}]}}\n'):
            handle.write(piece)
            digest.update(piece)
            size += len(piece)
        handle.write(good(3) + b"\n")
    summary = ingest(archive, str(path))
    assert (summary.records, summary.quarantined) == (3, 0)
    locator, stored_digest = rows(archive, "SELECT locator, raw_chunked FROM records ORDER BY seq")[1]
    read_back, length = hashlib.sha256(), 0
    for piece in chunks.pieces(archive.con, stored_digest):  # stored in chunks: read back a chunk at a time
        read_back.update(piece)
        length += len(piece)
    assert (locator, length, read_back.hexdigest()) == ("line 2", size, digest.hexdigest())
    assert rows(
        archive,
        "SELECT p.result_key, (SELECT sum(octet_length(chunk)) FROM value_chunks WHERE value_sha256 = p.text_chunked) "
        "FROM results r JOIN parts p USING (copy_id) WHERE r.kind = 'message'",  # the text, in chunks (ASCII)
    ) == [("message:huge", 200 * 2**20)]
    assert tasks(archive, str(path)) == ["t1", "t3", None]  # the message is a result of no task
