"""JSON that is A2A in shape but wrong in substance."""

from __future__ import annotations

import orjson
import pytest

from tests.transcripts import CITATIONS_MT, jsonrpc_result, rows, v1_task

from .cases import assert_quarantine, good, ingest, quarantined_raw, tasks


@pytest.mark.slow
def test_jsonrpc_response_with_both_result_and_error(archive, write):
    both = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"kind": "task", "id": "x", "status": {"state": "completed"}},
            "error": {"code": -32000, "message": "boom"},
        }
    )
    path = write("both.jsonl", good(1) + b"\n" + both + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert_quarantine(archive, summary, path, [("line 2", "a JSON-RPC response carries both result and error")])
    assert quarantined_raw(archive, path) == [both + b"\n"]
    assert tasks(archive, path) == ["t1", "t3"]
    assert rows(archive, "SELECT count(*) FROM rpc_errors") == [(0,)]


@pytest.mark.slow
def test_jsonrpc_result_with_a_null_error_is_a_result(archive, write):
    line = orjson.dumps({**orjson.loads(good(2)), "error": None})
    path = write("null-error.jsonl", line + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t2"]


@pytest.mark.slow
def test_part_with_two_content_fields(archive, write):
    line = orjson.dumps(jsonrpc_result({"task": v1_task("t2", [{"text": "a share", "data": {"share": 0.4}}])}))
    path = write("two.jsonl", good(1) + b"\n" + line + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert_quarantine(archive, summary, path, [("line 2", "a Part has more than one content field: text, data")])
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_citation_with_wrong_types_everywhere_is_indexed_as_invalid(archive, write):
    """The record is understood (not quarantined); its citation is stored, invalid, with every problem named."""
    wrong = {
        "study": 7,
        "period": ["W6"],
        "fielded": 20260402,
        "base": {"name": False, "n": "4210"},
        "weight": {"w": 1},
        "source": {"table": 1.5, "column": None, "function": []},
        "warnings": "none",
    }
    line = orjson.dumps(
        jsonrpc_result({"task": v1_task("t2", [{"data": {"share": 0.42}}, {"data": wrong, "mediaType": CITATIONS_MT}])})
    )
    path = write("wrong.jsonl", good(1) + b"\n" + line + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert rows(
        archive,
        "SELECT valid, problems, study, period, base_n, source_table, weight, warnings, fielded "
        "FROM citations WHERE result_key = 'task:t2'",
    ) == [
        (
            False,
            [
                "study is a number, not a string",
                "period is an array, not a string",
                "base.name is a boolean, not a string",
                "base.n is a string, not an integer",
                "source.table is a number, not a string",
                "source.column is null",
                "source.function is an array, not a string",
                "fielded is a number, not a string",
                "weight is an object, not a string",
                "warnings is not an array of strings",
            ],
            None,
            None,
            None,
            None,
            None,
            ['"none"'],
            None,
        )
    ]
    assert rows(archive, "SELECT count(*) FROM claims WHERE result_key = 'task:t2'") == [(1,)]


@pytest.mark.slow
def test_citation_whose_data_is_not_an_object(archive, write):
    line = orjson.dumps(
        jsonrpc_result(
            {"task": v1_task("t2", [{"data": {"share": 0.42}}, {"data": "W6, n=4210", "mediaType": CITATIONS_MT}])}
        )
    )
    path = write("string.jsonl", line + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert rows(archive, "SELECT valid, problems FROM citations") == [
        (False, ["citation data is a string, not an object"])
    ]


@pytest.mark.slow
def test_task_id_reused_by_a_different_context_in_one_file(archive, write):
    reused = good(1, context_id="ctx-other")
    path = write("reuse.jsonl", good(1) + b"\n" + reused + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("line 2", "task t1 was seen in context ctx-1; this record puts it in context ctx-other")],
    )
    assert quarantined_raw(archive, path) == [reused + b"\n"]
    assert rows(archive, "SELECT task_id, context_id FROM results ORDER BY task_id") == [
        ("t1", "ctx-1"),
        ("t3", "ctx-1"),
    ]


@pytest.mark.slow
def test_task_id_reused_by_a_different_context_in_another_file_is_another_copy(archive, write):
    first = write("a.jsonl", good(1) + b"\n")
    second = write("b.jsonl", good(1, context_id="ctx-other") + b"\n")
    summary = ingest(archive, first, second)
    assert summary.quarantined == 0
    assert rows(archive, "SELECT result_key, context_id FROM results ORDER BY source_path") == [
        ("task:t1", "ctx-1"),
        ("task:t1", "ctx-other"),
    ]  # two stored copies the audit can compare


@pytest.mark.slow
def test_jsonrpc_ids_that_are_objects_or_arrays(archive, write):
    request = {
        "jsonrpc": "2.0",
        "id": [1],
        "method": "message/send",
        "params": {"message": {"messageId": "q", "role": "user", "parts": [{"text": "How many?"}]}},
    }
    response = {**orjson.loads(good(2)), "id": {"n": 1}}
    path = write("ids.jsonl", orjson.dumps(request) + b"\n" + orjson.dumps(response) + b"\n")
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t2"]


@pytest.mark.slow
def test_valid_json_that_is_no_a2a_object(archive, write):
    path = write("other.jsonl", good(1) + b"\n" + b'{"hello": "world"}\n' + b"[1, 2]\n")
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("line 2", "no A2A object recognised (keys: hello)"), ("line 3", "a number where an A2A object was expected")],
    )
    assert tasks(archive, path) == ["t1"]


@pytest.mark.slow
def test_agent_card_with_fields_of_the_wrong_shape(archive, write):
    card = {
        "name": "Hostile",
        "skills": 1,
        "capabilities": ["extensions"],
        "supportedInterfaces": "http://x",
        "defaultOutputModes": "text/plain",
    }
    path = write("card.json", orjson.dumps(card))
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert rows(archive, "SELECT name, url, declares_extension, lists_media_type FROM agent_cards") == [
        ("Hostile", None, False, False)
    ]
