"""The audit: each rule fires where it must and stays silent on the nearest case that must not."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from archiver.audit import RULES
from archiver.cli import main
from archiver.errors import UsageError
from tests.transcripts import CITATIONS_MT, citation, jsonrpc_result, rows, v1_cited_parts, v1_task

EXTENSION_URI = "https://standards.upperhandai.com/ext/citations/v1"
NUMBERS = {"share": 0.42, "n": 1210}


def audit(archive, paths: list[str], **options):
    archive.ingest(paths)
    return archive.audit(**options)


def fired(report, rule: str | None = None) -> list:
    return [f for f in report.findings if rule is None or f.rule == rule]


def v03_task(
    task_id: str,
    parts: list[dict],
    state: str = "completed",
    artifact_id: str = "answer",
    history: list[dict] | None = None,
) -> dict:
    """A v0.3 JSON-RPC (kind-tagged) Task with one artifact holding `parts`."""
    return {
        "kind": "task",
        "id": task_id,
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": "2026-04-20T10:00:00Z"},
        "artifacts": [{"artifactId": artifact_id, "name": artifact_id, "parts": parts}],
        "history": history or [],
    }


def v03_data(data: dict, media_type: str | None = None) -> dict:
    part = {"kind": "data", "data": data}
    if media_type:
        part["metadata"] = {"mediaType": media_type}
    return part


def sse(*events: dict) -> str:
    return "".join(f"data: {orjson.dumps(event).decode()}\n\n" for event in events)


def card(
    name: str = "Versant Insights Agent",
    declares: bool = True,
    lists: bool = True,
    skill_modes: list[str] | None = None,
) -> dict:
    return {
        "name": name,
        "url": "http://versant.test/a2a",
        "version": "1.0",
        "capabilities": {"extensions": [{"uri": EXTENSION_URI, "required": False}] if declares else []},
        "defaultOutputModes": ["application/json", *([CITATIONS_MT] if lists else [])],
        "skills": [{"id": "quant", "name": "Quant", "outputModes": skill_modes or ["application/json"]}],
    }


# ---- uncited-result ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_uncited_result_fires_for_numbers_without_citation(archive, write):
    path = write("v/rpc.jsonl", [jsonrpc_result({"task": v1_task("t-uncited", [{"data": NUMBERS}])})])
    report = audit(archive, [path])
    (finding,) = fired(report)
    assert finding.rule == "uncited-result"
    assert finding.severity == "error"
    assert (finding.result_key, finding.task_id, finding.context_id) == ("task:t-uncited", "t-uncited", "ctx-1")
    assert (finding.artifact_id, finding.part_index, finding.source_path) == ("answer", 0, path)
    assert finding.locator == "line 1"
    assert finding.detail == 'task t-uncited states 2 numbers in artifact "answer" and carries no citation Part'


@pytest.mark.slow
def test_uncited_standalone_message_names_the_message(archive, write):
    message = {"messageId": "m-1", "role": "ROLE_AGENT", "contextId": "ctx-9", "parts": [{"data": {"n": 3}}]}
    report = audit(archive, [write("m.jsonl", [jsonrpc_result({"message": message})])])
    (finding,) = fired(report)
    assert (finding.rule, finding.result_key, finding.message_id) == ("uncited-result", "message:m-1", "m-1")
    assert finding.detail.startswith("message m-1 states 1 number")


@pytest.mark.slow
def test_citation_in_a_sibling_artifact_cites_the_task(archive, write):
    task = v1_task("t-sibling", [{"data": NUMBERS}])
    task["artifacts"].append(
        {"artifactId": "citation", "name": "citation", "parts": [{"data": citation(), "mediaType": CITATIONS_MT}]}
    )
    assert fired(audit(archive, [write("v/rpc.jsonl", [jsonrpc_result(task)])])) == []


@pytest.mark.slow
def test_streamed_citation_in_a_later_appended_chunk_cites_the_task(archive, write):
    start = v1_task("t-stream", [], state="TASK_STATE_WORKING")
    del start["artifacts"]
    chunk = {
        "taskId": "t-stream",
        "contextId": "ctx-1",
        "artifact": {"artifactId": "answer", "name": "answer", "parts": [{"data": NUMBERS}]},
    }
    later = {
        "taskId": "t-stream",
        "contextId": "ctx-1",
        "append": True,
        "lastChunk": True,
        "artifact": {"artifactId": "answer", "parts": [{"data": citation(), "mediaType": CITATIONS_MT}]},
    }
    done = {"taskId": "t-stream", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    path = write(
        "v/stream.sse",
        sse(
            *(
                jsonrpc_result(e)
                for e in ({"task": start}, {"artifactUpdate": chunk}, {"artifactUpdate": later}, {"statusUpdate": done})
            )
        ),
    )
    report = audit(archive, [path])
    assert fired(report) == []
    assert report.summary["validly_cited_results"] == 1


@pytest.mark.slow
def test_error_response_is_no_result(archive, write):
    error = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "Task not found"}}
    report = audit(archive, [write("v/rpc.jsonl", [error])])
    assert fired(report) == []
    assert report.summary["results"] == 0
    assert archive.stats()["error_responses"] == 1


@pytest.mark.slow
def test_non_terminal_snapshot_is_not_uncited(archive, write):
    task = v1_task("t-working", [{"data": NUMBERS}], state="TASK_STATE_WORKING")
    assert fired(audit(archive, [write("v/rpc.jsonl", [jsonrpc_result(task)])])) == []


@pytest.mark.slow
def test_partial_copy_of_a_finished_uncited_task_is_uncited(archive, write):
    partial = write("stream.jsonl", [jsonrpc_result(v1_task("t-cut", [{"data": NUMBERS}], state="TASK_STATE_WORKING"))])
    listed = v1_task("t-cut", [])
    del listed["artifacts"]
    terminal = write("list.json", {"tasks": [listed]})
    report = audit(archive, [partial, terminal])
    assert sorted((f.rule, f.severity, f.source_path) for f in fired(report)) == [
        ("dropped-part", "warning", terminal),
        ("uncited-result", "error", partial),
    ]


@pytest.mark.slow
def test_numbers_in_a_user_message_are_no_result(archive, write):
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "u-1", "role": "ROLE_USER", "parts": [{"data": {"budget": 1000}}]}},
    }
    reply = {"messageId": "a-1", "role": "ROLE_AGENT", "parts": [{"text": "Noted."}]}
    report = audit(archive, [write("v/rpc.jsonl", [request, jsonrpc_result({"message": reply})])])
    assert fired(report) == []
    assert report.summary["quantitative_results"] == 0


@pytest.mark.slow
def test_probable_citation_cites_the_result_but_lost_its_type(archive, write):
    task = v03_task("t-probable", [v03_data(NUMBERS), v03_data(citation())])
    report = audit(archive, [write("v/v03.jsonl", [jsonrpc_result(task)])])
    assert [f.rule for f in fired(report)] == ["citation-type-lost"]


# ---- invalid-citation -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"base": {"name": "Adults", "n": 0}}, "base.n is 0, not positive"),
        ({"base": {"name": "Adults", "n": 4210.5}}, "base.n is 4210.5, not an integer"),
        ({"base": {"name": "Adults", "n": "4210"}}, "base.n is a string, not an integer"),
        ({"source": {"table": "versant_flat", "column": "s14r5", "function": None}}, "source.function is null"),
        ({"study": None}, "study is missing"),
    ],
)
def test_invalid_citation_fires(archive, write, overrides, problem):
    task = v1_task("t-invalid", v1_cited_parts(**overrides))
    report = audit(archive, [write("v/rpc.jsonl", [jsonrpc_result(task)])])
    (finding,) = fired(report, "invalid-citation")
    assert finding.severity == "error"
    assert (finding.artifact_id, finding.part_index) == ("answer", 1)
    assert finding.detail == (f'citation Part 1 of artifact "answer" in task t-invalid fails Citations v1: {problem}')
    assert fired(report, "uncited-result") == []


@pytest.mark.slow
def test_integral_float_base_n_is_valid(archive, write):
    task = v1_task("t-float", v1_cited_parts(base={"name": "Adults 18-74", "n": 4210.0}))
    report = audit(archive, [write("v/rpc.jsonl", [jsonrpc_result(task)])])
    assert fired(report) == []
    assert report.summary["validly_cited_share"] == 1.0


# ---- citation-type-lost ------------------------------------------------------------------------------


@pytest.mark.slow
def test_type_lost_fires_for_a_stripped_citation(archive, write):
    task = v03_task("t-stripped", [v03_data(NUMBERS), v03_data(citation(warnings=None))])
    report = audit(archive, [write("v/v03.jsonl", [jsonrpc_result(task)])])
    (finding,) = fired(report)
    assert (finding.rule, finding.severity, finding.part_index) == ("citation-type-lost", "error", 1)
    assert "(study, period, base, source) but no media type" in finding.detail


@pytest.mark.slow
def test_type_lost_names_a_wrong_media_type(archive, write):
    task = v03_task("t-json", [v03_data(NUMBERS), v03_data(citation(), media_type="application/json")])
    (finding,) = fired(audit(archive, [write("v/v03.jsonl", [jsonrpc_result(task)])]))
    assert finding.rule == "citation-type-lost"
    assert "but media type application/json" in finding.detail


@pytest.mark.slow
@pytest.mark.parametrize("key", ["mediaType", "mimeType", "media_type"])
def test_citation_typed_in_metadata_is_not_type_lost(archive, write, key):
    cited = {"kind": "data", "data": citation(), "metadata": {key: CITATIONS_MT}}
    task = v03_task("t-typed", [v03_data(NUMBERS), cited])
    assert fired(audit(archive, [write("v/v03.jsonl", [jsonrpc_result(task)])])) == []


@pytest.mark.slow
def test_two_citation_keys_are_no_citation(archive, write):
    task = v03_task("t-two", [v03_data({"study": "X", "period": "W1", "n": 3})])
    assert [f.rule for f in fired(audit(archive, [write("v/v03.jsonl", [jsonrpc_result(task)])]))] == ["uncited-result"]


# ---- dropped-part ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_dropped_citation_is_an_error_for_the_copy_lacking_it(archive, write):
    full = write("v/stream.jsonl", [jsonrpc_result(v1_task("t-drop", v1_cited_parts()))])
    lost = write("v/list.json", {"tasks": [v1_task("t-drop", [{"data": NUMBERS}])]})
    report = audit(archive, [full, lost])
    (finding,) = fired(report)
    assert (finding.rule, finding.severity, finding.source_path) == ("dropped-part", "error", lost)
    assert (finding.artifact_id, finding.part_index) == ("answer", 1)
    assert finding.detail == (
        f"this completed copy of task t-drop lacks the citation Part that the completed "
        f'copy in {full} holds (Part 1 of artifact "answer")'
    )


@pytest.mark.slow
def test_dropped_text_part_is_a_warning(archive, write):
    status = {
        "state": "TASK_STATE_COMPLETED",
        "message": {"messageId": "a-1", "role": "ROLE_AGENT", "parts": [{"text": "NPS is +31."}]},
    }
    with_text = v1_task("t-text", v1_cited_parts())
    with_text["status"] = status
    report = audit(
        archive,
        [
            write("a.jsonl", [jsonrpc_result(with_text)]),
            write("b.jsonl", [jsonrpc_result(v1_task("t-text", v1_cited_parts()))]),
        ],
    )
    (finding,) = fired(report)
    assert (finding.rule, finding.severity, finding.message_id) == ("dropped-part", "warning", "a-1")
    assert finding.source_path.endswith("b.jsonl")
    assert "lacks the text Part" in finding.detail


@pytest.mark.slow
def test_non_terminal_copy_lacking_a_part_is_partial(archive, write):
    full = write("done.jsonl", [jsonrpc_result(v1_task("t-partial", v1_cited_parts()))])
    partial = write(
        "partial.jsonl", [jsonrpc_result(v1_task("t-partial", [{"data": NUMBERS}], state="TASK_STATE_WORKING"))]
    )
    assert fired(audit(archive, [full, partial])) == []


@pytest.mark.slow
def test_type_stripped_copy_is_not_dropped(archive, write):
    typed = write("v1.jsonl", [jsonrpc_result(v1_task("t-compat", v1_cited_parts()))])
    as_doubles = citation(base={"name": "Adults 18-74, aware of brand", "n": 4210.0})
    stripped = write(
        "v03.jsonl",
        [jsonrpc_result(v03_task("t-compat", [v03_data({"share": 0.42, "n": 1210.0}), v03_data(as_doubles)]))],
    )
    report = audit(archive, [typed, stripped])
    (finding,) = fired(report)
    assert (finding.rule, finding.source_path) == ("citation-type-lost", stripped)


@pytest.mark.slow
def test_user_message_missing_from_a_copy_is_not_dropped(archive, write):
    question = {"messageId": "u-1", "role": "ROLE_USER", "parts": [{"text": "NPS?"}]}
    with_history = v1_task("t-history", v1_cited_parts())
    with_history["history"] = [question]
    report = audit(
        archive,
        [
            write("a.jsonl", [jsonrpc_result(with_history)]),
            write("b.jsonl", [jsonrpc_result(v1_task("t-history", v1_cited_parts()))]),
        ],
    )
    assert fired(report) == []


# ---- undecoded-part --------------------------------------------------------------------------------


def js_object_part(data: dict, media_type: str = CITATIONS_MT) -> dict:
    """A Part as the JavaScript SDK's client holds it in memory (a ts-proto oneof), which no reader decodes."""
    return {"content": {"$case": "data", "value": data}, "mediaType": media_type, "filename": ""}


def store_row(task: dict) -> dict:
    """`task` as a row of an A2A SDK task store, its JSON columns held as text."""
    return {
        "id": task["id"],
        "context_id": task["contextId"],
        "kind": "task",
        "status": orjson.dumps(task["status"]).decode(),
        "artifacts": orjson.dumps(task["artifacts"]).decode(),
        "history": None,
        "metadata": None,
        "protocol_version": "1.0",
    }


@pytest.mark.slow
def test_undecoded_part_is_no_evidence_of_a_drop_either_way(archive, write):
    wire = write("wire.jsonl", [jsonrpc_result(v1_task("t-js", v1_cited_parts()))])
    dumped = v1_task("t-js", [{"data": NUMBERS}, js_object_part(citation())])
    store = write("store.jsonl", [store_row(dumped)])
    report = audit(archive, [wire, store])
    (finding,) = fired(report)
    assert (finding.rule, finding.severity, finding.source_path, finding.locator) == (
        "undecoded-part",
        "warning",
        store,
        "line 1",
    )
    assert (finding.result_key, finding.artifact_id, finding.part_index) == ("task:t-js", "answer", 1)
    assert finding.detail == (
        'Part 1 of artifact "answer" in task t-js could not be decoded (keys: content, filename, mediaType; '
        f"media type {CITATIONS_MT}): it is stored raw, and no evidence of a dropped Part"
    )
    assert report.summary["findings"]["dropped-part"] == 0
    assert archive.stats()["parts_undecoded"] == 1
    (raw,) = rows(archive, "SELECT data FROM parts WHERE kind = 'unknown'")
    assert orjson.loads(raw[0]) == js_object_part(citation())


@pytest.mark.slow
def test_a_real_drop_beside_an_undecoded_part_is_found(archive, write):
    wire = write("wire.jsonl", [jsonrpc_result(v1_task("t-js", v1_cited_parts()))])
    dumped = write("dump.jsonl", [jsonrpc_result(v1_task("t-js", [{"data": NUMBERS}, js_object_part(citation())]))])
    listed = write("list.json", {"tasks": [v1_task("t-js", [{"data": NUMBERS}])]})
    report = audit(archive, [wire, dumped, listed])
    assert sorted((f.rule, f.severity, f.source_path, f.part_index) for f in report.findings) == [
        ("dropped-part", "error", listed, 1),
        ("undecoded-part", "warning", dumped, 1),
    ]


@pytest.mark.slow
def test_decoded_parts_beside_an_undecoded_one_are_still_evidence(archive, write):
    wire = write("wire.jsonl", [jsonrpc_result(v1_task("t-js", v1_cited_parts()))])
    note = {"text": "NPS is +31."}
    dumped = write(
        "dump.jsonl", [jsonrpc_result(v1_task("t-js", [{"data": NUMBERS}, js_object_part(citation()), note]))]
    )
    report = audit(archive, [wire, dumped])
    assert sorted((f.rule, f.severity, f.source_path, f.part_index) for f in report.findings) == [
        ("dropped-part", "warning", wire, 2),
        ("undecoded-part", "warning", dumped, 1),
    ]
    (dropped,) = fired(report, "dropped-part")
    assert "lacks the text Part" in dropped.detail


@pytest.mark.slow
def test_an_event_of_unknown_shape_is_no_evidence_of_a_drop(archive, write):
    """A stream whose artifact came in a shape no recogniser knows (a logger's own envelope):
    the record is quarantined, and the copy it leaves is not said to lack what the record may hold."""
    wire = write("wire.jsonl", [jsonrpc_result(v1_task("t-js", v1_cited_parts()))])

    def status(state: str) -> dict:
        return {"statusUpdate": {"taskId": "t-js", "contextId": "ctx-1", "status": {"state": state}}}

    artifact = {"taskId": "t-js", "contextId": "ctx-1", "artifact": v1_task("t-js", v1_cited_parts())["artifacts"][0]}
    unknown = {"envelope": {"type": "artifact-chunk", "body": artifact}}
    stream = write("js-stream.jsonl", [status("TASK_STATE_WORKING"), unknown, status("TASK_STATE_COMPLETED")])
    listed = write("list.json", {"tasks": [v1_task("t-js", [{"data": NUMBERS}])]})
    report = audit(archive, [wire, stream, listed])
    assert sorted((f.rule, f.severity, f.source_path, f.locator) for f in report.findings) == [
        ("dropped-part", "error", listed, "document"),
        ("unreadable-record", "error", stream, "line 2"),
    ]


@pytest.mark.slow
def test_a_quarantined_record_naming_another_task_hides_no_drop(archive, write):
    full = write("a/full.jsonl", [jsonrpc_result(v1_task("t-drop", v1_cited_parts()))])
    other = {"envelope": {"type": "task", "body": {"id": "t-drop-2"}}}
    lost = write("b/lost.jsonl", [jsonrpc_result(v1_task("t-drop", [{"data": NUMBERS}])), other])
    report = audit(archive, [full, lost])
    assert sorted((f.rule, f.source_path, f.locator) for f in report.findings) == [
        ("dropped-part", lost, "line 1"),
        ("unreadable-record", lost, "line 2"),
    ]


@pytest.mark.slow
def test_undecoded_part_in_a_single_copy_is_named(archive, write):
    path = write("dump.jsonl", [jsonrpc_result(v1_task("t-one", [{"kind": "image", "image": "x.png"}]))])
    (finding,) = fired(audit(archive, [path]))
    assert (finding.rule, finding.part_index) == ("undecoded-part", 0)
    assert "(keys: image, kind)" in finding.detail


# ---- card-mode-undeclared ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("declares", "lists", "says"),
    [
        (True, False, "declares the Citations v1 extension but lists its media type in neither"),
        (False, True, "lists the citations media type among its output modes but does not declare"),
    ],
)
def test_card_mode_undeclared_fires(archive, write, declares, lists, says):
    path = write("agent-card.json", card(declares=declares, lists=lists))
    (finding,) = fired(audit(archive, [path]))
    assert (finding.rule, finding.severity, finding.result_key, finding.source_path) == (
        "card-mode-undeclared",
        "warning",
        None,
        path,
    )
    assert says in finding.detail


@pytest.mark.slow
@pytest.mark.parametrize(
    ("declares", "lists", "skill_modes"),
    [
        (True, True, None),
        (False, False, None),
        (True, False, ["application/json", CITATIONS_MT]),
    ],
)
def test_consistent_card_is_fine(archive, write, declares, lists, skill_modes):
    path = write("agent-card.json", card(declares=declares, lists=lists, skill_modes=skill_modes))
    assert fired(audit(archive, [path])) == []


# ---- small-base -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "min_base", "fires"), [(24, 30, True), (24.0, 30, True), (30, 30, False), (24, 20, False), (4210, 30, False)]
)
def test_small_base(archive, write, n, min_base, fires):
    task = v1_task("t-small", v1_cited_parts(base={"name": "GPs, Corsica", "n": n}))
    report = audit(archive, [write("v/rpc.jsonl", [jsonrpc_result(task)])], min_base=min_base)
    found = fired(report)
    assert [f.rule for f in found] == (["small-base"] if fires else [])
    if fires:
        assert found[0].severity == "warning"
        assert found[0].detail.endswith(f'rests on base "GPs, Corsica" of n = 24, below the minimum base of {min_base}')


@pytest.mark.slow
def test_invalid_base_is_not_also_small(archive, write):
    task = v1_task("t-zero", v1_cited_parts(base={"name": "Adults", "n": 0}))
    assert [f.rule for f in fired(audit(archive, [write("rpc.jsonl", [jsonrpc_result(task)])]))] == ["invalid-citation"]


# ---- unreadable-record ------------------------------------------------------------------------------


@pytest.mark.slow
def test_quarantined_record_is_unreadable(archive, write):
    good = orjson.dumps(jsonrpc_result(v1_task("t-ok", v1_cited_parts()))).decode()
    path = write("rpc.jsonl", f'{good}\n{{"jsonrpc": "2.0", "result": \n{good}\n')
    (finding,) = fired(audit(archive, [path]))
    assert (finding.rule, finding.severity, finding.locator, finding.result_key) == (
        "unreadable-record",
        "error",
        "line 2",
        None,
    )
    assert finding.detail.startswith("record at line 2 was quarantined at ingest (invalid JSON")


@pytest.mark.slow
def test_clean_file_has_no_unreadable_record(archive, write):
    path = write("rpc.jsonl", [jsonrpc_result(v1_task("t-ok", v1_cited_parts()))])
    assert fired(audit(archive, [path])) == []


# ---- filters, rule selection, summary ---------------------------------------------------------------


@pytest.fixture
def two_agents(archive, write, tmp_path):
    """Versant (one uncited, one cited task in June) and Santé (one uncited task in April)."""
    write("versant/agent-card.json", card("Versant Insights Agent"))
    write("sante/agent-card.json", card("Santé Panel Agent", lists=False))
    june = v1_task("t-cited", v1_cited_parts())
    june["status"]["timestamp"] = "2026-06-01T08:00:00Z"
    write("versant/rpc.jsonl", [jsonrpc_result(v1_task("t-v-uncited", [{"data": NUMBERS}])), jsonrpc_result(june)])
    write("sante/rpc.jsonl", [jsonrpc_result(v1_task("t-s-uncited", [{"data": {"n": 1}}]))])
    archive.ingest([str(tmp_path / "in")])
    return archive


def keys(report) -> list:
    return sorted((f.rule, f.result_key) for f in report.findings)


@pytest.mark.slow
def test_no_filter_reports_everything(two_agents):
    assert keys(two_agents.audit()) == [
        ("card-mode-undeclared", None),
        ("uncited-result", "task:t-s-uncited"),
        ("uncited-result", "task:t-v-uncited"),
    ]


@pytest.mark.slow
def test_agent_filter(two_agents):
    assert keys(two_agents.audit(agent="Santé Panel Agent")) == [
        ("card-mode-undeclared", None),
        ("uncited-result", "task:t-s-uncited"),
    ]
    assert keys(two_agents.audit(agent=["Santé*", "Nobody"])) == keys(two_agents.audit(agent="Santé Panel Agent"))
    assert keys(two_agents.audit(agent="santé panel agent")) == []
    assert keys(two_agents.audit(agent="Nobody' OR 1=1 --")) == []


@pytest.mark.slow
def test_study_filter_keeps_only_results_citing_it(two_agents):
    report = two_agents.audit(study="Versant Mega Tracker")
    assert keys(report) == []
    assert report.summary["results"] == 1


@pytest.mark.slow
def test_time_filters(two_agents):
    assert keys(two_agents.audit(since="2026-05-01")) == []
    assert keys(two_agents.audit(until="2026-04-20")) == [
        ("uncited-result", "task:t-s-uncited"),
        ("uncited-result", "task:t-v-uncited"),
    ]
    assert keys(two_agents.audit(until="2026-04-19")) == []
    assert keys(two_agents.audit(until="2026-04-20T10:00:00Z")) == keys(two_agents.audit(until="2026-04-20"))
    assert keys(two_agents.audit(until="2026-04-20T09:59:59Z")) == []


@pytest.mark.slow
def test_source_filter_takes_directories_and_globs(two_agents, tmp_path):
    root = tmp_path / "in"
    assert keys(two_agents.audit(source=str(root / "versant"))) == [("uncited-result", "task:t-v-uncited")]
    assert keys(two_agents.audit(source=str(root / "*" / "agent-card.json"))) == [("card-mode-undeclared", None)]
    assert keys(two_agents.audit(source="*/sante/rpc.jsonl")) == [("uncited-result", "task:t-s-uncited")]


@pytest.mark.slow
def test_rule_selection(two_agents):
    assert keys(two_agents.audit(rules=["card-mode-undeclared"])) == [("card-mode-undeclared", None)]
    report = two_agents.audit(exclude_rules=["uncited-result"])
    assert keys(report) == [("card-mode-undeclared", None)]
    assert "uncited-result" not in report.summary["findings"]
    with pytest.raises(UsageError, match="unknown rule"):
        two_agents.audit(rules=["no-such-rule"])


@pytest.mark.slow
def test_scope_does_not_hide_the_other_copy(archive, write):
    full = write("a/full.jsonl", [jsonrpc_result(v1_task("t-drop", v1_cited_parts()))])
    lost = write("b/lost.jsonl", [jsonrpc_result(v1_task("t-drop", [{"data": NUMBERS}]))])
    report = audit(archive, [full, lost], source=lost)
    assert [(f.rule, f.source_path) for f in report.findings] == [("dropped-part", lost)]
    assert audit(archive, [], source=full).findings == []


@pytest.mark.slow
def test_summary_counts(two_agents):
    s = two_agents.audit().summary
    assert (
        s["results"],
        s["copies"],
        s["quantitative_results"],
        s["cited_results"],
        s["validly_cited_results"],
        s["claims"],
    ) == (3, 3, 3, 1, 1, 2 + 2 + 1)
    assert s["validly_cited_share"] == pytest.approx(0.3333)
    assert s["findings"] == {
        rule.id: n for rule, n in zip(RULES, (2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), strict=True)
    }
    assert s["findings_by_severity"] == {"error": 2, "warning": 1}
    assert {g["agent"]: (g["quantitative_results"], g["validly_cited_results"]) for g in s["per_agent"]} == {
        "Versant Insights Agent": (2, 1),
        "Santé Panel Agent": (1, 0),
    }
    assert {g["study"]: g["validly_cited_share"] for g in s["per_study"]} == {"Versant Mega Tracker": 1.0, None: 0.0}


@pytest.mark.slow
def test_type_lost_citation_is_cited_but_not_validly(archive, write):
    task = v03_task("t-stripped", [v03_data(NUMBERS), v03_data(citation())])
    s = audit(archive, [write("v03.jsonl", [jsonrpc_result(task)])]).summary
    assert (s["quantitative_results"], s["cited_results"], s["validly_cited_results"]) == (1, 1, 0)


# ---- the command line -------------------------------------------------------------------------------


@pytest.fixture
def cli_db(tmp_path, write):
    """An archive with one uncited task (error) and one small-base citation (warning)."""
    db = str(tmp_path / "cli.duckdb")
    paths = [
        write(
            "rpc.jsonl",
            [
                jsonrpc_result(v1_task("t-uncited", [{"data": NUMBERS}])),
                jsonrpc_result(v1_task("t-small", v1_cited_parts(base={"name": "GPs", "n": 12})), rpc_id=2),
            ],
        )
    ]
    assert CliRunner().invoke(main, ["ingest", "--db", db, *paths]).exit_code == 0
    return db


def run(*args: str):
    return CliRunner().invoke(main, ["audit", *args])


@pytest.mark.slow
def test_cli_json(cli_db):
    result = run("--db", cli_db, "--format", "json")
    assert result.exit_code == 1
    document = orjson.loads(result.output)
    assert set(document) == {"findings", "summary"}
    assert [f["rule"] for f in document["findings"]] == ["uncited-result", "small-base"]
    assert set(document["findings"][0]) >= {
        "rule",
        "severity",
        "task_id",
        "message_id",
        "context_id",
        "artifact_id",
        "part_index",
        "source_path",
        "locator",
        "detail",
    }
    assert document["summary"]["findings"]["uncited-result"] == 1
    assert document["summary"]["quantitative_results"] == 2


@pytest.mark.slow
def test_cli_exit_codes(cli_db):
    assert run("--db", cli_db).exit_code == 1
    assert run("--db", cli_db, "--fail-on", "never").exit_code == 0
    assert run("--db", cli_db, "--exclude-rule", "uncited-result").exit_code == 0
    assert run("--db", cli_db, "--exclude-rule", "uncited-result", "--fail-on", "warning").exit_code == 1
    assert run("--db", cli_db, "--rule", "no-such-rule").exit_code == 2
    assert run("--db", cli_db, "--fail-on", "sometimes").exit_code == 2
    assert run("--db", cli_db, "--since", "yesterday").exit_code == 2
    assert run("--db", cli_db, "--min-base", "0").exit_code == 2


@pytest.mark.slow
def test_cli_jsonl_and_table(cli_db):
    lines = run("--db", cli_db, "--format", "jsonl").output.splitlines()
    assert [orjson.loads(line)["rule"] for line in lines] == ["uncited-result", "small-base"]
    table = run("--db", cli_db, "--min-base", "10").output
    summary, findings, closing = table.split("\n\n")
    assert summary.startswith("1 error, 0 warnings in 2 results")
    assert findings.startswith("error    uncited-result")
    assert "small-base" not in findings
    assert closing == "1 error, 0 warnings in 2 results (2 stored copies)\n"


@pytest.mark.slow
def test_cli_sarif(cli_db):
    result = run("--db", cli_db, "--format", "sarif", "--fail-on", "never")
    assert result.exit_code == 0
    sarif = orjson.loads(result.output)
    assert sarif["version"] == "2.1.0"
    assert "sarif" in sarif["$schema"]
    (run_,) = sarif["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [rule.id for rule in RULES]
    assert all(r["defaultConfiguration"]["level"] in ("error", "warning") for r in rules)
    first, second = run_["results"]
    assert (first["ruleId"], first["level"], second["ruleId"], second["level"]) == (
        "uncited-result",
        "error",
        "small-base",
        "warning",
    )
    assert rules[first["ruleIndex"]]["id"] == "uncited-result"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("rpc.jsonl")
    assert location["region"] == {"startLine": 1}
    assert second["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}
    assert "line 1" in first["message"]["text"]
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "task:t-uncited"


@pytest.mark.slow
def test_cli_filters_reach_the_audit(cli_db):
    result = run("--db", cli_db, "--format", "json", "--source", "*/nowhere/*")
    assert result.exit_code == 0
    assert orjson.loads(result.output)["findings"] == []


def test_cli_without_archive_fails_cleanly(tmp_path):
    result = run("--db", str(tmp_path / "missing.duckdb"))
    assert result.exit_code == 1
    assert "no archive here" in result.output


# Issue 41, item 4: the audit for people at scale: errors first, --limit, --summary, csv and tsv.


@pytest.fixture
def warning_first_db(tmp_path, write):
    """The warning (a small base) in the file before the error (an uncited task), and a second error."""
    db = str(tmp_path / "order.duckdb")
    small = v1_task("t-small", v1_cited_parts(base={"name": "GPs", "n": 12}))
    tasks = [small, v1_task("t-uncited", [{"data": NUMBERS}]), v1_task("t-bare", [{"data": {"n": 7}}])]
    lines = [jsonrpc_result(task, rpc_id=at) for at, task in enumerate(tasks, 1)]
    assert CliRunner().invoke(main, ["ingest", "--db", db, write("a.jsonl", lines)]).exit_code == 0
    return db


@pytest.mark.slow
def test_cli_errors_come_before_warnings_in_every_format(warning_first_db):
    jsonl = run("--db", warning_first_db, "--format", "jsonl").output.splitlines()
    assert [orjson.loads(line)["severity"] for line in jsonl] == ["error", "error", "warning"]
    sarif = orjson.loads(run("--db", warning_first_db, "--format", "sarif").output)
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["error", "error", "warning"]
    table = run("--db", warning_first_db, "--format", "table").output
    assert table.index("error    uncited-result") < table.index("warning  small-base")


@pytest.mark.slow
def test_cli_limit_writes_the_first_findings_and_the_summary_counts_all(warning_first_db):
    result = run("--db", warning_first_db, "--format", "json", "--limit", "1")
    assert result.exit_code == 1
    document = orjson.loads(result.output)
    assert [f["task_id"] for f in document["findings"]] == ["t-uncited"]
    assert document["summary"]["findings_by_severity"] == {"error": 2, "warning": 1}
    table = run("--db", warning_first_db, "--limit", "2").output
    assert table.count("uncited-result  ") == 2
    assert "small-base  " not in table.split("\n\n")[1]
    assert table.endswith("2 errors, 1 warning in 3 results (3 stored copies); the first 2 shown (--limit)\n")
    assert run("--db", warning_first_db, "--limit", "0", "--format", "jsonl").output == ""
    assert len(run("--db", warning_first_db, "--limit", "9", "--format", "jsonl").output.splitlines()) == 3


@pytest.mark.slow
def test_cli_summary_writes_the_counts_by_rule_agent_and_study(warning_first_db):
    from archiver.audit.summary import SUMMARY_FIELDS

    table = run("--db", warning_first_db, "--summary", "--fail-on", "never")
    assert table.exit_code == 0
    assert table.output.startswith("2 errors, 1 warning in 3 results (3 stored copies)\n")
    assert "uncited-result 2" in table.output
    assert "t-uncited" not in table.output  # no finding listed
    rows = [orjson.loads(line) for line in run("--db", warning_first_db, "--summary", "--nl").output.splitlines()]
    assert list(rows[0]) == list(SUMMARY_FIELDS)
    by_rule = {row["name"]: (row["errors"], row["warnings"]) for row in rows if row["by"] == "rule"}
    assert list(by_rule) == [rule.id for rule in RULES]
    assert by_rule["uncited-result"] == (2, 0)
    assert by_rule["small-base"] == (0, 1)
    studies = [row for row in rows if row["by"] == "study"]
    assert [(row["name"], row["quantitative_results"], row["validly_cited_results"]) for row in studies] == [
        ("Versant Mega Tracker", 1, 1),
        (None, 2, 0),
    ]
    csv_lines = run("--db", warning_first_db, "--summary", "--csv").output.splitlines()
    assert csv_lines[0] == ",".join(SUMMARY_FIELDS)
    assert "rule,uncited-result,2,0,,,," in csv_lines
    refused = run("--db", warning_first_db, "--summary", "--format", "sarif")
    assert refused.exit_code == 2
    assert "--summary" in refused.output


@pytest.mark.slow
def test_cli_csv_and_tsv_write_a_finding_a_line_under_its_fields(warning_first_db):
    from archiver.audit.report import PUBLISHED_FIELDS

    lines = run("--db", warning_first_db, "--csv").output.splitlines()
    assert lines[0] == ",".join(PUBLISHED_FIELDS)
    assert [line.split(",")[:2] for line in lines[1:]] == [
        ["uncited-result", "error"],
        ["uncited-result", "error"],
        ["small-base", "warning"],
    ]
    tsv = run("--db", warning_first_db, "--tsv", "--no-headers").output.splitlines()
    assert [line.split("\t")[3] for line in tsv] == ["t-uncited", "t-bare", "t-small"]
    assert len(tsv) == 3
