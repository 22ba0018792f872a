"""The core's `cite` stage and `understand::assemble` against the Python code they replaced
(`archiver.cite`: `citation_of`, `numeric_leaves`, `judged`; `archiver.understand.assemble.FileAssembly`),
frozen: the inputs the differential tests generated (citations with every field hostile, field periods in
every ISO form, claim data, events of files of up to 14 records, with tasks put aside), the explicit edge
cases and the records and Parts of every sample and test-corpus file, with the Python code's answers, are
in `tests/snapshots/core/cite.jsonl.gz` (`tests/snapshots/core/make.py` wrote them from the tag
`python-normaliser-last`). The core must give them exactly, types and order included."""

from __future__ import annotations

import pytest

from archiver import _core
from tests.snapshots.core import frozen

SNAPSHOT = frozen.read("cite")


def assert_frozen(test: str, output_of, at_least: int) -> None:
    cases = SNAPSHOT[test]
    assert len(cases) >= at_least, (test, len(cases))
    found = frozen.mismatches(cases, output_of)
    assert not found, "\n".join(found)


def citation(given: list):
    data, media_type = given
    return _core.citation_of_value(data, media_type)


# Citations


def test_citations():
    assert_frozen("citations", citation, 150)


def test_citation_data_of_every_type():
    assert_frozen("citation_data", citation, 150)


def test_field_periods():
    assert_frozen("field_periods", citation, 150)


def test_every_week_of_the_edges():
    """Week 53 exists only in the years that have it; years 1 and 9999 end where `date` does."""
    assert_frozen("weeks", citation, 420)


def test_base_n_problems():
    assert_frozen("base_n", citation, 9)


def test_citations_frozen_are_valid_and_invalid():
    """The frozen citations reach both verdicts (a snapshot of one verdict alone would test little)."""
    verdicts = {case["out"]["valid"] for case in SNAPSHOT["citations"] if case["out"] is not None}
    assert verdicts == {True, False}


def test_base_n_beyond_a_double():
    """Python's `float(n)` raised OverflowError for an integer beyond a double; the core gives infinity
    (a known divergence: the Python ingest failed there)."""
    data = {"study": "s", "period": "p", "base": {"name": "b", "n": 10**400}}
    assert _core.citation_of_value(data, "application/vnd.upperhand.citations+json")["base_n"] == float("inf")


# Claims


def test_numeric_leaves():
    assert_frozen("numeric_leaves", _core.numeric_leaves_of_value, 150)


def test_numeric_leaves_deep():
    def leaves(levels: int):
        data = 7
        for level in range(levels):
            data = [data, level] if level % 2 else {"~/": data, "n": 1.5}
        return _core.numeric_leaves_of_value(data)

    assert_frozen("numeric_leaves_deep", leaves, 1)


def test_judged():
    assert_frozen("judged", lambda given: _core.judged_value(*given), 150)


# Assembly: the events of a file through the core's assembly, as Python's FileAssembly gave them


def one_task_a_record(records: list) -> bool:
    """Whether no record touches two tasks: then which tasks are put aside, and so the order of the copies,
    does not hang on the order of a Python set (where it did, the copies are compared sorted)."""
    kinds = ("task", "status_update", "artifact_update")
    return all(len({e["task_id"] for e in events if e["event"] in kinds}) <= 1 for _, _, events, _, _ in records)


def _copies_sorted(items: list) -> list:
    copies = sorted((item for item in items if item[0] == "copy"), key=lambda item: item[1]["key"])
    return [item for item in items if item[0] != "copy"] + copies


def assembled(given: dict) -> list:
    records = [tuple(record) for record in given["records"]]
    core = _core.assemble_values(records, given["held"], given["kept"])
    return core if one_task_a_record(records) else _copies_sorted(core)


def test_assembly():
    assert_frozen("assembly", assembled, 60)


def test_assembly_with_tasks_put_aside():
    assert_frozen("assembly_put_aside", assembled, 60)


def test_many_loose_messages_and_tasks_put_aside():
    """Past LOOSE_BATCH loose messages and with most tasks on disk, nothing changes."""
    records = []
    for index in range(1500):
        task = f"t{index % 97}"
        events = [
            {
                "event": "status_update",
                "task_id": task,
                "context_id": "c",
                "status": {"state": "working", "timestamp": index, "message": None},
            },
            {
                "event": "message",
                "message_id": None if index % 3 else f"m{index % 50}",
                "role": ("agent", "user", "unknown")[index % 3],
                "parts": [
                    {
                        "kind": "text",
                        "text": str(index % 7),
                        "data": None,
                        "file": None,
                        "media_type": None,
                        "metadata": None,
                        "raw": None,
                    }
                ],
                "context_id": "c",
                "task_id": task if index % 5 == 0 else None,
                "metadata": None,
            },
        ]
        records.append((f"r{index}", index, events, f"line {index + 1}", 100))
    (case,) = SNAPSHOT["many_loose"]
    copies = assembled({"records": records, **case["in"]})
    assert frozen.matches(copies, case)
    assert len(copies) > 97


def test_a_context_conflict_is_refused_before_any_change():
    assert_frozen("context_conflict", assembled, 2)
    for case in SNAPSHOT["context_conflict"]:
        assert case["out"][0] == ["refused", "r2", "task t1 was seen in context c1; this record puts it in context c2"]


# The samples: every record of every file the tests ingest, as the Python readers read them when frozen

SAMPLE_FILES = sorted({case["file"] for case in SNAPSHOT["samples"]})


def test_samples_are_many():
    assert len(SAMPLE_FILES) > 30
    assert sum(len(case["in"]["records"]) for case in SNAPSHOT["samples"]) > 200
    assert sum(len(case["in"]) for case in SNAPSHOT["sample_parts"]) > 100


def _of_file(test: str, name: str) -> list[dict]:
    return [case for case in SNAPSHOT[test] if case["file"] == name]


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_samples_through_the_cores_events_of(name):
    """The decoded records of a file through the core's events_of and assembly, as through Python's."""

    def assembled_decoded(given: dict) -> list:
        records = [tuple(record) for record in given["records"]]
        return _copies_sorted(_core.assemble_decoded(records, given["held"], given["kept"]))

    cases = _of_file("samples_decoded", name)
    assert len(cases) == 2
    found = frozen.mismatches(cases, assembled_decoded)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_samples(name):
    """A file's events (as the Python `prepare` read them) through the core's assembly, and every Part of
    them through the core's `judged` and citation reading."""

    def judged_parts(parts: list) -> list:
        return [
            [
                _core.judged_value(kind, data, media_type, "agent")[1],
                _core.citation_of_value(data, media_type) if kind == "data" else None,
            ]
            for kind, data, media_type in parts
        ]

    cases = _of_file("samples", name)
    assert len(cases) == 2
    found = frozen.mismatches(cases, assembled) + frozen.mismatches(_of_file("sample_parts", name), judged_parts)
    assert not found, "\n".join(found)
