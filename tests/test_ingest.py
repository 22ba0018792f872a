"""Ingest: every container, stream reassembly, copies, byte-exact storage, idempotence, quarantine."""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from archiver.cli import main
from tests.stored import WHOLE_RECORDS
from tests.transcripts import CITATIONS_MT, citation, jsonrpc_result, rows, v1_cited_parts, v1_task


def sse(events: list[dict], newline: str = "\n", pretty: bool = False) -> str:
    blocks = []
    for number, event in enumerate(events):
        text = json.dumps(event, indent=2) if pretty else json.dumps(event)
        data = newline.join(f"data: {line}" for line in text.split("\n"))
        blocks.append(f": ping{newline}event: message{newline}id: {number}{newline}{data}{newline}{newline}")
    return "".join(blocks)


def stream_events(task_id: str = "t-stream") -> list[dict]:
    """A v1.0 JSON-RPC stream: a bare task, the numbers, the citation appended in a later chunk, completion."""
    return [
        jsonrpc_result({"task": {"id": task_id, "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
        jsonrpc_result(
            {
                "artifactUpdate": {
                    "taskId": task_id,
                    "contextId": "c",
                    "artifact": {"artifactId": "answer", "parts": [{"data": {"share": 0.42, "n": 1210}}]},
                }
            }
        ),
        jsonrpc_result(
            {
                "artifactUpdate": {
                    "taskId": task_id,
                    "contextId": "c",
                    "append": True,
                    "lastChunk": True,
                    "artifact": {"artifactId": "answer", "parts": [{"data": citation(), "mediaType": CITATIONS_MT}]},
                }
            }
        ),
        jsonrpc_result(
            {"statusUpdate": {"taskId": task_id, "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
        ),
    ]


def counts(archive) -> dict:
    return archive.stats()


@pytest.mark.slow
def test_json_lines_log_with_request_response_and_error(archive, write):
    path = write(
        "log.jsonl",
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": {"messageId": "u1", "role": "ROLE_USER", "parts": [{"text": "What share?"}]}},
            },
            jsonrpc_result({"task": v1_task("t1", v1_cited_parts())}),
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "Task not found"}},
        ],
    )
    summary = archive.ingest([path])
    assert (summary.files, summary.records, summary.quarantined) == (1, 3, 0)
    assert (summary.tasks, summary.results, summary.citations, summary.claims, summary.error_responses) == (
        1,
        1,
        1,
        2,
        1,
    )
    # the user's question is kept with the task it started, as a user part (never a result part)
    assert rows(archive, "SELECT role, text FROM parts WHERE kind = 'text'") == [("user", "What share?")]


@pytest.mark.slow
def test_json_document_array_and_unusual_extension(archive, write):
    doc = write("dump.json", json.dumps([v1_task("a", v1_cited_parts()), v1_task("b", v1_cited_parts())], indent=2))
    lines = write("calls.log", [jsonrpc_result({"task": v1_task("c", v1_cited_parts())})] * 2)
    archive.ingest([doc, lines])
    assert rows(archive, "SELECT path, container, records FROM sources ORDER BY path") == [
        (lines, "jsonl", 2),
        (doc, "json", 1),
    ]
    assert counts(archive)["tasks"] == 3


@pytest.mark.slow
def test_sse_capture_reassembles_streamed_task_with_append(archive, write):
    path = write("stream.sse", sse(stream_events()))
    summary = archive.ingest([path])
    assert summary.quarantined == 0
    assert summary.records == 4
    assert rows(archive, "SELECT state, terminal FROM results") == [("completed", True)]
    assert rows(archive, "SELECT artifact_id, part_index, is_citation FROM parts ORDER BY ordinal") == [
        ("answer", 0, False),
        ("answer", 1, True),
    ]
    assert counts(archive)["claims"] == 2


@pytest.mark.slow
def test_sse_multiline_data_crlf_and_gzip(archive, write):
    pretty = write("rest.sse", sse([{"task": v1_task("p", v1_cited_parts())}], pretty=True))
    crlf = write("crlf.sse", sse(stream_events("t-crlf"), newline="\r\n"))
    zipped = write("z.sse.gz", sse(stream_events("t-gz")), compress=True)
    summary = archive.ingest([pretty, crlf, zipped])
    assert summary.quarantined == 0
    assert rows(archive, "SELECT task_id FROM results ORDER BY task_id") == [("p",), ("t-crlf",), ("t-gz",)]
    assert rows(archive, "SELECT compression FROM sources WHERE path = ?", [zipped]) == [("gzip",)]


@pytest.mark.slow
def test_container_detected_by_content_not_extension(archive, write):
    sse_as_txt = write("capture.txt", sse(stream_events("t-txt")))
    jsonl_gz_as_dat = write(
        "blob.dat",
        "\n".join(json.dumps(jsonrpc_result({"task": v1_task(f"g{i}", v1_cited_parts())})) for i in range(3)) + "\n",
        compress=True,
    )
    archive.ingest([sse_as_txt, jsonl_gz_as_dat])
    assert sorted(rows(archive, "SELECT container, compression FROM sources")) == [("jsonl", "gzip"), ("sse", None)]
    assert counts(archive)["tasks"] == 4


def make_task_store(path: Path) -> None:
    """A SQLite file shaped like the A2A SDK's DatabaseTaskStore, rows of three protocol versions."""
    con = sqlite3.connect(path)
    con.execute("""CREATE TABLE tasks (id VARCHAR(36) PRIMARY KEY, context_id VARCHAR(36) NOT NULL,
        kind VARCHAR(16) NOT NULL, owner VARCHAR(255), last_updated DATETIME, status JSON NOT NULL,
        artifacts JSON, history JSON, protocol_version VARCHAR(16), metadata JSON)""")
    v03 = {
        "artifactId": "a",
        "parts": [
            {"kind": "data", "data": {"x": 1}, "metadata": None},
            {"kind": "data", "data": citation(), "metadata": {"mediaType": CITATIONS_MT}},
        ],
    }
    v10 = {"artifactId": "a", "parts": [{"data": {"x": 2.0}}, {"data": citation(), "mediaType": CITATIONS_MT}]}
    con.executemany(
        "INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                "r-null",
                "c",
                "task",
                None,
                None,
                json.dumps({"state": "completed", "message": None}),
                json.dumps([v03]),
                "[]",
                None,
                None,
            ),
            (
                "r-03",
                "c",
                "task",
                "o",
                "2026-04-20 10:00:00",
                json.dumps({"state": "completed"}),
                json.dumps([v03]),
                None,
                "0.3",
                "null",
            ),
            (
                "r-10",
                "c",
                "task",
                "o",
                "2026-04-20 10:00:00",
                json.dumps({"state": "TASK_STATE_COMPLETED"}),
                json.dumps([v10]),
                None,
                "1.0",
                None,
            ),
        ],
    )
    con.commit()
    con.close()


@pytest.mark.slow
def test_sqlite_task_store_rows_of_mixed_protocol_versions(archive, tmp_path):
    store = tmp_path / "tasks.db"
    make_task_store(store)
    summary = archive.ingest([str(store)])
    assert summary.quarantined == 0
    assert summary.records == 3
    assert rows(archive, "SELECT task_id, state FROM results ORDER BY task_id") == [
        ("r-03", "completed"),
        ("r-10", "completed"),
        ("r-null", "completed"),
    ]
    assert rows(archive, "SELECT count(*), bool_and(valid), bool_or(inferred) FROM citations") == [(3, True, False)]
    assert rows(archive, "SELECT locator FROM records ORDER BY seq") == [
        ("tasks rowid 1",),
        ("tasks rowid 2",),
        ("tasks rowid 3",),
    ]


@pytest.mark.slow
def test_a_sqlite_file_that_is_not_a_task_store_is_quarantined(archive, tmp_path):
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (body TEXT)")
    con.commit()
    con.close()
    summary = archive.ingest([str(other)])
    assert summary.quarantined == 1
    assert "not a readable task store" in rows(archive, "SELECT reason FROM quarantine")[0][0]


@pytest.mark.slow
def test_snapshot_and_stream_in_one_file_merge_into_one_copy(archive, write):
    events = [*stream_events("t-merge"), jsonrpc_result(v1_task("t-merge", v1_cited_parts()), rpc_id=7)]
    path = write("merged.jsonl", events)
    archive.ingest([path])
    assert rows(archive, "SELECT count(*) FROM results") == [(1,)]
    # the later snapshot supersedes the chunks: one citation Part, not two
    assert rows(archive, "SELECT count(*) FROM citations") == [(1,)]


@pytest.mark.slow
def test_same_task_in_two_files_is_two_linked_copies(archive, write):
    first = write("a.jsonl", [jsonrpc_result({"task": v1_task("shared", v1_cited_parts())})])
    second = write("b.jsonl", [{"tasks": [v1_task("shared", [{"data": {"share": 0.42, "n": 1210}}])]}])
    archive.ingest([first, second])
    assert rows(
        archive,
        "SELECT source_path, count(*) FROM parts WHERE result_key = 'task:shared' "
        "GROUP BY source_path ORDER BY source_path",
    ) == [(first, 2), (second, 1)]
    assert counts(archive)["results"] == 1
    assert counts(archive)["copies"] == 2


@pytest.mark.slow
def test_standalone_agent_message_is_a_result(archive, write):
    path = write(
        "msg.jsonl",
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "kind": "message",
                        "messageId": "q",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "How many?"}],
                    }
                },
            },
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "kind": "message",
                    "messageId": "m1",
                    "role": "agent",
                    "contextId": "c",
                    "parts": [
                        {"kind": "data", "data": {"count": 12}},
                        {"kind": "data", "data": citation(), "metadata": {"mediaType": CITATIONS_MT}},
                    ],
                },
            },
        ],
    )
    archive.ingest([path])
    assert rows(archive, "SELECT result_key, kind, terminal FROM results") == [("message:m1", "message", True)]
    assert rows(archive, "SELECT role, kind FROM parts ORDER BY ordinal") == [
        ("user", "text"),
        ("agent", "data"),
        ("agent", "data"),
    ]
    assert counts(archive)["claims"] == 1


@pytest.mark.slow
def test_probable_citation_is_indexed_as_inferred(archive, write):
    stripped = [
        {"kind": "data", "data": {"share": 0.42}},
        {"kind": "data", "data": citation(base={"name": "Adults", "n": 4210.0})},
    ]
    path = write(
        "compat.jsonl",
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "kind": "task",
                    "id": "t-lost",
                    "contextId": "c",
                    "status": {"state": "completed"},
                    "artifacts": [{"artifactId": "a", "parts": stripped}],
                },
            }
        ],
    )
    archive.ingest([path])
    assert rows(archive, "SELECT inferred, valid, base_n FROM citations") == [(True, True, 4210.0)]
    assert rows(archive, "SELECT media_type, is_citation FROM parts ORDER BY ordinal") == [(None, False), (None, True)]


@pytest.mark.slow
def test_claims_exclude_bools_and_numeric_strings(archive, write):
    data = {"share": 0.42, "n": 1210, "flag": True, "label": "3", "rows": [1, "2", False, 3.5]}
    path = write("c.jsonl", [jsonrpc_result({"task": v1_task("t", v1_cited_parts(data))})])
    archive.ingest([path])
    assert rows(archive, "SELECT pointer, literal FROM claims ORDER BY pointer") == [
        ("/n", "1210"),
        ("/rows/0", "1"),
        ("/rows/3", "3.5"),
        ("/share", "0.42"),
    ]


@pytest.mark.slow
def test_raw_records_are_stored_byte_exact_and_cover_the_file(archive, write):
    content = (
        "\ufeff"
        + json.dumps(jsonrpc_result({"task": v1_task("t", v1_cited_parts())}))
        + "\r\n\n"
        + json.dumps({"tasks": []})
        + "\n"
    ).encode()
    path = write("bom.jsonl", content)
    archive.ingest([path])
    stored = rows(archive, f"SELECT raw, sha256 FROM {WHOLE_RECORDS} AS r WHERE source_path = ? ORDER BY seq", [path])
    assert b"".join(raw for raw, _ in stored) == content
    assert all(hashlib.sha256(raw).hexdigest() == sha for raw, sha in stored)
    sse_bytes = sse(stream_events(), newline="\r\n").encode()
    sse_path = write("s.sse", sse_bytes)
    archive.ingest([sse_path])
    assert (
        b"".join(
            r
            for (r,) in rows(
                archive, f"SELECT raw FROM {WHOLE_RECORDS} AS r WHERE source_path = ? ORDER BY seq", [sse_path]
            )
        )
        == sse_bytes
    )


@pytest.mark.slow
def test_reingest_adds_nothing_and_growth_adds_only_new_records(archive, write, tmp_path):
    lines = [jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())}) for i in range(3)]
    path = write("grow.jsonl", lines)
    archive.ingest([path])
    before = counts(archive)
    again = archive.ingest([path])
    assert (again.files_unchanged, again.duplicates_skipped, again.quarantined) == (1, 3, 0)
    assert counts(archive) == before
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(jsonrpc_result({"task": v1_task("t3", v1_cited_parts())})) + b"\n")
        handle.write(orjson.dumps(stream_events("t0")[3]) + b"\n")  # a later event of an earlier task
    grown = archive.ingest([path])
    assert (grown.records, grown.duplicates_skipped) == (5, 3)
    after = counts(archive)
    assert after["records"] == before["records"] + 2
    assert (after["tasks"], after["copies"], after["citations"]) == (4, 4, 4)


@pytest.mark.slow
def test_quarantined_line_amid_good_ones(archive, write):
    good = [orjson.dumps(jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())})) for i in range(2)]
    path = write(
        "bad.jsonl", good[0] + b'\n{"jsonrpc": "2.0", "id": 3, "res\n' + good[1] + b"\n" + b'{"hello": "world"}\n'
    )
    summary = archive.ingest([path])
    assert (summary.records, summary.quarantined, summary.tasks) == (4, 2, 2)
    reasons = rows(archive, "SELECT locator, reason FROM quarantine ORDER BY line")
    assert [locator for locator, _ in reasons] == ["line 2", "line 4"]
    assert reasons[0][1].startswith("invalid JSON")
    assert reasons[1][1].startswith("no A2A object recognised")


@pytest.mark.slow
def test_each_file_commits_atomically_a_failed_file_leaves_nothing(archive, write, monkeypatch):
    import pyarrow as pa

    from archiver.ingest import pipeline as ingest_module
    from archiver.load.spool import Spool

    ok = write("ok.jsonl", [jsonrpc_result({"task": v1_task("ok", v1_cited_parts())})])
    boom = write("boom.jsonl", [jsonrpc_result({"task": v1_task("boom", v1_cited_parts())})])
    archive.ingest([ok])
    real_prepare = ingest_module.prepare

    def prepare_a_bad_claims_batch(*args):
        [prepared] = real_prepare(*args)
        bad = Spool()
        for name, table in prepared.tables:
            bad.add(name, pa.table({"pointer": [1]}) if name == "claims" else table)
        prepared.discard()
        prepared.tables = bad
        return [prepared]

    monkeypatch.setattr(ingest_module, "prepare", prepare_a_bad_claims_batch)
    with pytest.raises(Exception, match=r"(?i)part_id|not null|constraint"):
        archive.ingest([boom])
    for table in ("records", "results", "parts", "citations", "claims"):
        assert rows(archive, f"SELECT DISTINCT source_path FROM {table}") == [(ok,)], table
    assert rows(archive, "SELECT path FROM sources") == [(ok,)]
    monkeypatch.undo()
    assert archive.ingest([boom]).quarantined == 0
    assert archive.stats()["tasks"] == 2


@pytest.mark.slow
def test_small_files_prepared_together_are_written_together_or_each_alone_the_same(tmp_path, write):
    """Small files share their batches; the writer stores them all at once, or some files of the batches
    (the rest given up or written later), and the archive holds the same rows either way."""
    from archiver.archive import Archive
    from archiver.load.schemas import arrow_schemas
    from archiver.load.versions import new_version
    from archiver.load.writer import write_files
    from archiver.prepare import prepare
    from archiver.read.containers import SourceFile

    paths = [
        write(f"f{n}.jsonl", [jsonrpc_result({"task": v1_task(f"t{n}", v1_cited_parts())}), {"no": "a2a"}])
        for n in range(4)
    ]
    with Archive.open(str(tmp_path / "whole.duckdb")) as whole:
        whole.ingest(paths)
        expected = {table: tables_rows(whole, table) for table in ("records", "results", "parts", "claims")}
    with Archive.open(str(tmp_path / "apart.duckdb")) as apart:
        files = []
        for path in paths:
            data = Path(path).read_bytes()
            sha256 = hashlib.sha256(data).hexdigest()
            files.append((SourceFile(path), new_version(path, sha256, len(data), None, None)))
        prepared = prepare(files, arrow_schemas(apart.con))
        assert len({id(one.tables) for one in prepared}) == 1  # one set of batches for the four
        assert write_files(apart.con, [prepared[3], prepared[1]]) == [2, 2]
        assert tables_rows(apart, "records") == [r for r in expected["records"] if r[1] in (paths[1], paths[3])]
        assert write_files(apart.con, [prepared[0], prepared[2]]) == [2, 2]
        assert {table: tables_rows(apart, table) for table in expected} == expected


def tables_rows(archive, table: str) -> list[tuple]:
    """A table's rows without the moment they were written, in a stable order."""
    return rows(archive, f"SELECT COLUMNS(c -> c != 'ingested_at') FROM {table} ORDER BY ALL")


@pytest.mark.slow
def test_cli_ingest_summary_json_and_exit_status(tmp_path, write):
    good = write("good.jsonl", [jsonrpc_result({"task": v1_task("t", v1_cited_parts())})])
    db = str(tmp_path / "cli.duckdb")
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", good, "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["files"], summary["records"], summary["citations"], summary["claims"]) == (1, 1, 1, 2)
    bad = write("bad.jsonl", b"not json\n")
    result = runner.invoke(main, ["ingest", bad, "--db", db])
    assert result.exit_code == 1
    assert f"{bad}: line 1: invalid JSON" in result.stderr
    assert f"warning: {bad}: no A2A object recognised" in result.stderr
    stats = json.loads(runner.invoke(main, ["stats", "--db", db, "--json"]).stdout)
    assert (stats["records"], stats["quarantined"], stats["tasks"]) == (2, 1, 1)


@pytest.mark.slow
def test_cli_reads_stdin_and_globs(tmp_path, write):
    write("x/one.jsonl", [jsonrpc_result({"task": v1_task("one", v1_cited_parts())})])
    write("x/two.jsonl", [jsonrpc_result({"task": v1_task("two", v1_cited_parts())})])
    db = str(tmp_path / "g.duckdb")
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", str(tmp_path / "in" / "x" / "*.jsonl"), "--db", db, "--json"])
    assert json.loads(result.stdout)["tasks"] == 2
    piped = orjson.dumps(jsonrpc_result({"task": v1_task("three", v1_cited_parts())}))
    result = runner.invoke(main, ["ingest", "-", "--db", db, "--json"], input=piped)
    assert json.loads(result.stdout)["tasks"] == 3
    missing = runner.invoke(main, ["ingest", str(tmp_path / "nope.jsonl"), "--db", db])
    assert missing.exit_code == 1
    assert "no such file or directory" in missing.output


@pytest.mark.slow
def test_gzip_bomb_and_corrupt_gzip_are_refused_with_a_reason(archive, write, monkeypatch):
    from archiver.read import containers

    monkeypatch.setattr(containers, "GZIP_LIMIT", 10_000)
    bomb = write("bomb.jsonl.gz", b"\n" * 1_000_000, compress=True)
    corrupt = write("corrupt.jsonl.gz", gzip.compress(b'{"tasks": []}\n' * 100)[:-30])
    summary = archive.ingest([bomb, corrupt], workers=1)  # the patched limit lives in this process
    reasons = [r for (r,) in rows(archive, "SELECT reason FROM quarantine ORDER BY source_path")]
    assert summary.quarantined == 2
    assert "gzip expands past the limit" in reasons[0]
    assert "corrupt gzip" in reasons[1]


@pytest.mark.slow
def test_the_same_file_part_in_two_dialects_has_one_identity(archive, write):
    v03 = write(
        "v03.jsonl",
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "kind": "task",
                    "id": "t-file",
                    "contextId": "c",
                    "status": {"state": "completed"},
                    "artifacts": [
                        {
                            "artifactId": "a",
                            "parts": [
                                {
                                    "kind": "file",
                                    "file": {"uri": "https://x/r.pdf", "name": "r.pdf", "mimeType": "application/pdf"},
                                }
                            ],
                        }
                    ],
                },
            }
        ],
    )
    v10 = write(
        "v10.jsonl",
        [
            jsonrpc_result(
                {
                    "task": v1_task(
                        "t-file", [{"url": "https://x/r.pdf", "filename": "r.pdf", "mediaType": "application/pdf"}]
                    )
                }
            )
        ],
    )
    archive.ingest([v03, v10])
    assert rows(archive, "SELECT count(DISTINCT content_hash), count(*), any_value(kind) FROM parts") == [
        (1, 2, "file")
    ]


@pytest.mark.slow
def test_sources_come_back_as_typed_rows(archive, write):
    from archiver.store.models import SourceRow

    path = write("typed.jsonl", [jsonrpc_result({"task": v1_task(f"t{i}", v1_cited_parts())}) for i in range(2)])
    archive.ingest([path])
    (source,) = archive.sources()
    assert isinstance(source, SourceRow)
    with open(path, "rb") as handle:
        expected_sha = hashlib.sha256(handle.read()).hexdigest()
    assert (source.path, source.sha256, source.container, source.records, source.quarantined) == (
        path,
        expected_sha,
        "jsonl",
        2,
        0,
    )


@pytest.mark.parametrize("top", ["corpus", "corpus/", "./corpus", "."])
def test_ignore_rules_apply_beneath_their_folder_however_the_walk_is_named(tmp_path, monkeypatch, top):
    from archiver.ingest import expand

    files = [
        "a.json", "notes.md", "skip/x.json", "deep/b.json", "deep/c.tmp.json", "deep/inner/d.json",
        "deep/inner/e.tmp.json", "deep/inner/f.md", "other/c.tmp.json", "other/private/g.json", "h/private/i.json",
    ]  # fmt: skip
    corpus = tmp_path / "corpus"
    for name in files:
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text("{}")
    (corpus / ".archiverignore").write_text("# the top's rules\n*.md\nskip/\n")
    (corpus / "deep" / ".archiverignore").write_text("*.tmp.json\n")
    (corpus / "other" / ".archiverignore").write_text("private/\n")
    monkeypatch.chdir(corpus if top == "." else tmp_path)
    found = sorted(str(Path(source.path).resolve().relative_to(corpus)) for source in expand([top]))
    assert found == [
        "a.json", "deep/b.json", "deep/inner/d.json", "h/private/i.json", "other/c.tmp.json",
    ]  # fmt: skip
