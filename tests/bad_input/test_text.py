"""Bad text: truncation, encodings, byte-order marks, line endings, empty and binary files."""

from __future__ import annotations

import json

import pytest

from tests.transcripts import rows, v1_cited_parts, v1_task

from .cases import assert_quarantine, event, good, ingest, quarantined_raw, stored_bytes, tasks

BOM = b"\xef\xbb\xbf"


@pytest.mark.slow
def test_truncated_json_line_between_good_lines(archive, write):
    cut = good(2)[:-20]
    path = write("cut.jsonl", good(1) + b"\n" + cut + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("line 2", "invalid JSON: an unescaped control character (U+000A) in a string: line 1 column 592 (byte 591)")],
    )
    assert quarantined_raw(archive, path) == [cut + b"\n"]
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_json_lines_cut_at_end_of_file(archive, write):
    path = write("tail.jsonl", good(1) + b"\n" + good(2)[:100])
    summary = ingest(archive, path)
    assert_quarantine(
        archive, summary, path, [("line 2", "invalid JSON: unexpected end of the text: line 1 column 101 (byte 100)")]
    )
    assert tasks(archive, path) == ["t1"]


@pytest.mark.slow
def test_truncated_json_document_next_to_a_good_file(archive, write):
    text = json.dumps([v1_task("a", v1_cited_parts())]).encode()
    path = write("cut.json", text[:-10])
    neighbour = write("fine.json", text)
    summary = ingest(archive, path, neighbour)
    assert_quarantine(
        archive, summary, path, [("document", "invalid JSON: unexpected end of the text: line 1 column 604 (byte 603)")]
    )
    assert quarantined_raw(archive, path) == [text[:-10]]
    assert summary.unrecognised_files == [path]
    assert tasks(archive, neighbour) == ["a"]


@pytest.mark.slow
def test_invalid_utf8_in_a_line(archive, write):
    bad = good(2).replace(b"W6", b"W\xff6")
    path = write("latin.jsonl", good(1) + b"\n" + bad + b"\n" + good(3) + b"\n")
    summary = ingest(archive, path)
    offset = bad.index(b"\xff")
    reason = f"invalid JSON: invalid UTF-8 byte 0xff: line 1 column {offset + 1} (byte {offset})"
    assert_quarantine(archive, summary, path, [("line 2", reason)])
    assert quarantined_raw(archive, path) == [bad + b"\n"]
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_invalid_utf8_in_an_sse_event(archive, write):
    bad = good(2).replace(b"W6", b"W\xc3(")
    path = write("latin.sse", event(good(1)) + event(bad) + event(good(3)))
    summary = ingest(archive, path)
    offset = bad.index(b"\xc3")
    reason = f"invalid JSON: invalid UTF-8 byte 0xc3: line 1 column {offset + 1} (byte {offset})"
    assert_quarantine(archive, summary, path, [("event 2 (line 3)", reason)])
    assert tasks(archive, path) == ["t1", "t3"]


@pytest.mark.slow
def test_bom_on_json_lines_is_accepted_and_kept(archive, write):
    content = BOM + good(1) + b"\n" + good(2) + b"\n"
    path = write("bom.jsonl", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_bom_on_json_document_is_accepted_and_kept(archive, write):
    content = BOM + json.dumps({"tasks": [v1_task("a", v1_cited_parts())]}).encode()
    path = write("bom.json", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["a"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_bom_on_sse_capture_is_accepted_and_kept(archive, write):
    content = BOM + event(good(1)) + event(good(2))
    path = write("bom.sse", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert rows(archive, "SELECT container FROM sources") == [("sse",)]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_crlf_json_lines(archive, write):
    content = good(1) + b"\r\n" + good(2) + b"\r\n"
    path = write("crlf.jsonl", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_mixed_line_endings_in_json_lines(archive, write):
    content = good(1) + b"\r\n" + good(2) + b"\n\r\n" + good(3) + b"\r\r\n" + good(4)
    path = write("mixed.jsonl", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2", "t3", "t4"]
    assert rows(archive, "SELECT locator, kind FROM records ORDER BY seq") == [
        ("line 1", "json"),
        ("line 2", "json"),
        ("line 3", "filler"),
        ("line 4", "json"),
        ("line 5", "json"),
    ]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_mixed_line_endings_in_an_sse_capture(archive, write):
    content = event(good(1), b"\r\n") + event(good(2)) + b"data: " + good(3) + b"\r\n\n"
    path = write("mixed.sse", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2", "t3"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_empty_file_is_reported_not_quarantined(archive, write):
    path = write("empty.jsonl", b"")
    summary = ingest(archive, path)
    assert (summary.files, summary.records, summary.quarantined) == (1, 0, 0)
    assert summary.unrecognised_files == [path]
    assert rows(archive, "SELECT container, records FROM sources") == [("empty", 0)]


@pytest.mark.slow
def test_whitespace_only_file_keeps_its_bytes_as_filler(archive, write):
    path = write("blank.jsonl", b"\n \r\n\t\n")
    summary = ingest(archive, path)
    assert (summary.records, summary.quarantined, summary.unrecognised_files) == (0, 0, [path])
    assert rows(archive, "SELECT kind, locator FROM records ORDER BY seq") == [("filler", "line 1")]  # one run
    assert stored_bytes(archive, path) == b"\n \r\n\t\n"


@pytest.mark.slow
def test_binary_file_is_quarantined_whole_next_to_a_good_file(archive, write):
    content = bytes(range(256)) * 10
    path = write("blob.jsonl", content)
    neighbour = write("fine.jsonl", good(1) + b"\n")
    summary = ingest(archive, path, neighbour)
    assert_quarantine(archive, summary, path, [("file", "not JSON, JSON Lines, SSE or SQLite (binary)")])
    assert quarantined_raw(archive, path) == [content]
    assert tasks(archive, neighbour) == ["t1"]


@pytest.mark.slow
def test_a_nul_byte_in_a_json_line_quarantines_that_line_only(archive, write):
    bad = good(2).replace(b"W6", b"W\x006")
    content = good(1) + b"\n" + bad + b"\n" + good(3) + b"\n"
    path = write("nul.jsonl", content)
    summary = ingest(archive, path)
    column = bad.index(b"\x00") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "line 2",
                "invalid JSON: an unescaped control character (U+0000) in a string: "
                f"line 1 column {column} (byte {column - 1})",
            )
        ],
    )
    assert quarantined_raw(archive, path) == [bad + b"\n"]
    assert tasks(archive, path) == ["t1", "t3"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_a_nul_byte_first_in_an_unnamed_json_lines_file(archive, write):
    """No .jsonl name, the first line the bad one: the JSON lines after it still make it JSON Lines."""
    content = b"\x00\x00" + good(1) + b"\n" + good(2) + b"\n"
    path = write("capture.log", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("line 1", "invalid JSON: expected a value, found U+0000: line 1 column 1 (byte 0)")],
    )
    assert tasks(archive, path) == ["t2"]
    assert stored_bytes(archive, path) == content


def test_a_nul_byte_in_an_sse_event_quarantines_that_event_only(archive, write):
    bad = good(2).replace(b"W6", b"W\x006")
    content = event(good(1)) + event(bad) + event(good(3))
    path = write("nul.sse", content)
    summary = ingest(archive, path)
    column = bad.index(b"\x00") + 1
    assert_quarantine(
        archive,
        summary,
        path,
        [
            (
                "event 2 (line 3)",
                "invalid JSON: an unescaped control character (U+0000) in a string: "
                f"line 1 column {column} (byte {column - 1})",
            )
        ],
    )
    assert tasks(archive, path) == ["t1", "t3"]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_a_binary_file_with_a_number_on_a_line_is_still_binary(archive, write):
    content = bytes(range(256)) + b"\n1\n" + bytes(range(256))
    path = write("blob.jsonl", content)
    summary = ingest(archive, path)
    assert_quarantine(archive, summary, path, [("file", "not JSON, JSON Lines, SSE or SQLite (binary)")])


@pytest.mark.slow
def test_bare_cr_sse_capture_is_read_event_by_event(archive, write):
    """The SSE spec ends a line with CRLF, LF or a bare CR; the raw bytes are kept exactly."""
    content = event(good(1), b"\r") + b": ping\r\r" + event(good(2), b"\r")
    path = write("cr.sse", content)
    summary = ingest(archive, path)
    assert summary.quarantined == 0
    assert tasks(archive, path) == ["t1", "t2"]
    assert rows(archive, "SELECT locator, kind, line, byte_offset FROM records ORDER BY seq") == [
        ("event 1 (line 1)", "json", 1, 0),
        ("line 3", "filler", 3, len(event(good(1)))),
        ("event 2 (line 5)", "json", 5, len(event(good(1))) + 8),
    ]
    assert stored_bytes(archive, path) == content


@pytest.mark.slow
def test_sse_capture_mixing_cr_crlf_and_lf(archive, write):
    content = (
        b"event: message\r"
        + event(good(1), b"\r")
        + b"id: 2\r\n"
        + event(good(2), b"\r\n")
        + event(good(3), b"\n")
        + b"data: "
        + good(4)
        + b"\r\n\r"
        + b"data: "
        + good(5)[:30]
        + b"\r"
    )
    path = write("mixed-cr.sse", content)
    summary = ingest(archive, path)
    assert_quarantine(
        archive,
        summary,
        path,
        [("event 5 (line 11)", "invalid JSON: unexpected end of the text: line 1 column 31 (byte 30)")],
    )
    assert tasks(archive, path) == ["t1", "t2", "t3", "t4"]
    assert stored_bytes(archive, path) == content


ESCAPES = "\x1b]0;owned\x07\x1b[31m\r\u202e"
"""A window title, a colour, a bare carriage return and a right-to-left override."""


@pytest.mark.slow
def test_control_characters_in_names_and_values_are_shown_never_acted_on(tmp_path):
    """File names and transcript values reach the terminal as escapes (`\\x1b`, `\\r`, `\\u202e`): a hostile
    name or task id could otherwise retitle the window, recolour or overwrite lines, or reorder text."""
    from click.testing import CliRunner

    from archiver.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    task = f"t{ESCAPES}x"
    (folder / f"a{ESCAPES}.jsonl").write_bytes(
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": v1_task(task, [{"data": {"share": 0.5}}])}).encode() + b"\n"
    )
    (folder / f"n{ESCAPES}.jsonl").write_bytes(b'{"hello": "world"}\n')
    db = str(tmp_path / "a.duckdb")
    said = []
    for args in (
        ["ingest", str(folder)],
        ["ingest", str(folder / f"missing{ESCAPES}")],
        ["audit"],
        ["show", task],
        ["query", "results", "--format", "table"],
        ["query", "claims", "--format", "table"],
    ):
        result = CliRunner().invoke(main, [*args, "--db", db])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        said.append(result.output)
    everything = "".join(said)
    for char in "\x1b\x07\r\u202e":
        assert char not in everything, repr(char)
    assert "\\x1b]0;owned\\x07\\x1b[31m\\r\\u202e" in everything
    assert everything.count("\\x1b]0;owned") >= 5  # the warning, the error, the finding, the result, the claims
