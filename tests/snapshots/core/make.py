# ruff: noqa: C901, N812, PERF401 - one long, plain generator a test file, the reference tests imported by letter
"""Regenerate the snapshots of `tests/test_core_{json,read,understand,cite,index}.py` from the Python
normaliser the compiled core replaced.

    python tests/snapshots/core/make.py /path/to/checkout-of-python-normaliser-last [json read ...]

Run it from any directory, with an interpreter that has the project's dependencies (the test venv), after
copying a built core into that checkout (`cp archiver/_core/_core.abi3.so /that/checkout/archiver/_core.abi3.so`:
some of its modules import `_core`). The checkout is the git tag `python-normaliser-last`, the last revision holding the
Python code (`archiver/read/`, `archiver/understand/`, `archiver/canonical.py`, `archiver/cite/`, and its
differential tests, whose reference functions and hypothesis strategies are used here as they were).

When: after a sample or test-corpus file changes (the read and index tests check every file's SHA-256
against the one the snapshot was made from and name the stale ones), or after a deliberate change of
behaviour that the reference shares (then change that checkout, not the tag's, and review the diff of the
outputs). Never to make a failing comparison pass: a difference is a difference from the Python code.

The reference learns what the core was deliberately taught after the tag and the generated inputs reach:
`since-the-tag.patch` beside this file (gRPC's `{"id"}` request and the Go SDK's slog lines, issue 27;
integers of any length, past `int`'s 4300 digits, issue 39) is applied to the checkout first, once.

What it writes: one `<name>.jsonl.gz` a test file, one case a line: the test that compares it, its input
(drawn once by the reference tests' strategies, derandomised, and kept, so the cases stay the same whatever
hypothesis later draws) and the reference's output (or the SHA-256 of a long one); see `frozen.py`. The
inputs are the files of this repository (`sample_transcripts/`, `tests/`), read where this script lies.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
GROUPS = ("json", "read", "understand", "cite", "index")


def _frozen():
    spec = importlib.util.spec_from_file_location("frozen", HERE / "frozen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


frozen = _frozen()


def _this_repository(path: str):
    """A module of this repository by its file (the reference checkout is first on `sys.path`)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def drawn(strategy, count: int) -> list:
    """`count` examples of a strategy, the same ones on every run (hypothesis derandomised, no database)."""
    from hypothesis import HealthCheck, Phase, given, settings

    found: list = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example):
        found.append(example)

    collect()
    return found


# Samples of stacks the Python normaliser never read, made after it was replaced: their shapes (an object
# keyed by task id, ids only in a message's metadata) are read by recognisers it did not have, so they are
# no difference to freeze; tests/test_samples.py and tests/test_yields.py hold them.
AFTER_THE_NORMALISER = (
    "sample_transcripts/fasta2a-pulse/",
    "sample_transcripts/fasta2a-pydantic-ai/",
    "sample_transcripts/python-a2a-harbour/",
    "sample_transcripts/go-osprey-energy/",
    "sample_transcripts/java-meridian/",  # its JPA store's rows: the whole task in task_data
    "sample_transcripts/generate/java/",  # the Java generator's sources (and its Maven build's target/)
)


def corpus(skip=(".py", ".pyc")) -> list[Path]:
    """The sample and test-corpus files (not the test sources, nor the snapshots made from them)."""
    return [
        path
        for folder in ("sample_transcripts", "tests")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.is_file()
        and path.suffix not in skip
        and "__pycache__" not in path.parts
        and "node_modules" not in path.parts
        and not path.relative_to(ROOT).as_posix().startswith(("tests/snapshots/", *AFTER_THE_NORMALISER))
    ]


def taught_since_the_tag(reference: Path) -> None:
    """`since-the-tag.patch` applied to the reference checkout, unless it already is."""
    patch = HERE / "since-the-tag.patch"

    def applies(*options: str) -> bool:
        command = ["git", "-C", str(reference), "apply", *options, str(patch)]
        return subprocess.run(command, capture_output=True, check=False).returncode == 0

    if not applies("--reverse", "--check") and not applies():
        raise SystemExit(f"{patch.name} does not apply to {reference}")


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def case(test: str, given, output, **more) -> dict:
    return {"test": test, "in": given, **more, **frozen.expected(output)}


# --- json ---------------------------------------------------------------------------------------------


def make_json() -> list[dict]:
    from archiver.canonical import canonical_json, compact_json, content_hash, key_hash
    from archiver.read.decode import decode, nesting_depth
    from hypothesis import strategies as st

    from archiver.read.containers import SourceFile, read_records
    from tests import test_core_json as J

    def decoded(payload):
        outcome = J.python_decode(payload)
        return list(outcome)

    def written(payload):
        try:
            value = decode(payload)
        except ValueError:
            return None
        return [compact_json(value), canonical_json(value), content_hash(value)]

    def printed(payload):
        try:
            value = decode(payload)
        except ValueError:
            return None
        return str(value)

    checks = {"decode": decoded, "write": written, "str": printed, "depth": lambda p: max(nesting_depth(p), 0)}

    def json_case(test, **payloads):
        given = {kind: list(items) for kind, items in payloads.items()}
        output = {kind: [checks[kind](p) for p in items] for kind, items in given.items()}
        return case(test, given, output)

    cases = []
    for value, style in drawn(st.tuples(J.values, st.integers(0, 3)), 150):
        payload = J.as_text(value, style) if style else J._safe_orjson(value)
        cases.append(json_case("values", decode=[payload], write=[payload]))
    examples = [
        "1e16",
        "1.5e-7",
        "4.9e-324",
        "2.4703282292062328e-324",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "9" * 309,
        "-" + "9" * 400,
    ]
    for literal in examples + drawn(J.number_literals, 150):
        p = literal.encode()
        cases.append(json_case("numbers", decode=[p, b"[" + p + b", 1]", b'{"n": ' + p + b"}"], write=[p], str=[p]))
    members_strategy = st.lists(st.tuples(st.sampled_from(["a", "b", "é", "a\\u0062", ""]), J.scalars), max_size=8)
    for members in drawn(members_strategy, 150):
        import json

        body = ",".join(f"{J._key_text(key)}:{json.dumps(value)}" for key, value in members)
        payload = ("{" + body + "}").encode()
        cases.append(json_case("repeated_keys", decode=[payload], write=[payload]))
    for parts in drawn(st.lists(st.one_of(st.none(), J.texts), max_size=6), 150):
        cases.append(case("key_hash", parts, key_hash(*parts)))
    for payload in drawn(st.binary(max_size=60), 150):
        cases.append(json_case("random_bytes", decode=[payload]))

    @st.composite
    def damaged(draw):
        value, style = draw(J.values), draw(st.integers(0, 3))
        payload = J.as_text(value, style) if style else J._safe_orjson(value)
        cut = draw(st.integers(0, len(payload)))
        if not payload:
            return [payload[:cut]], []
        at = draw(st.integers(0, len(payload) - 1))
        byte = draw(
            st.sampled_from(list(b'[]{}",:\\ \n0123456789.eE+-tfnNaIu\x00\x1f\x7f\xc3\xa9\xff')) | st.integers(0, 255)
        )
        mutated = payload[:at] + bytes([byte]) + payload[at + 1 :]
        return [payload[:cut], mutated, payload[:at] + payload[at + 1 :]], [mutated]

    for refused, writes in drawn(damaged(), 150):
        cases.append(json_case("damaged", decode=refused, write=writes))
    for fragments in drawn(st.lists(st.sampled_from(J.FRAGMENTS), min_size=1, max_size=8), 150):
        refused, writes = [], []
        for joiner in (b"", b",", b" "):
            payload = joiner.join(fragments)
            refused += [payload, b"[" + payload + b"]", b'{"k":' + payload + b"}"]
            writes.append(b"[" + payload + b"]")
        cases.append(json_case("fragments", decode=refused, write=writes))
    for payload in J.EXPLICIT:
        cases.append(json_case("explicit", decode=[payload], write=[payload]))
    nesting = st.tuples(
        st.integers(940, 1030),
        st.sampled_from([b"[", b'{"a":', b'[{"k":']),
        st.sampled_from(
            [b"1", b"1234567890123456789", b"NaN", b'"x"', b"1e400", b"", b'"\\ud83d\\ude00", 1' + b"1" * 19]
        ),
        st.booleans(),
    )
    for levels, opener, leaf, closed in drawn(nesting, 50):
        closer = {b"[": b"]", b'{"a":': b"}", b'[{"k":': b"}]"}[opener]
        cases.append(json_case("deep", decode=[opener * levels + leaf + (closer * levels if closed else b"")]))
    for count in [600, 638, 639, 700, 1023, 1024, 1025, 1100, 3000]:
        for shape in [b"[", b"[[", b'{"":[', b"[  "]:
            payloads = [
                shape * count,
                b"[" + b"1," * count + b"1]",
                b"[" + b"[]," * count + b"[]]",
                b'{"a":[' + b'{"":0},' * count + b"0]}",
            ]
            cases.append(json_case("pool", decode=payloads))
    depth_inputs = st.binary(max_size=40) | st.text(st.sampled_from('[]{}"\\\nab'), max_size=40).map(str.encode)
    for payload in [b'["[[[", "\\"[", {"\\\n": [[[]]]}]', *drawn(depth_inputs, 150)]:
        cases.append(json_case("depth", depth=[payload]))
    for path in corpus(skip=(".py", ".pyc", ".md", ".db", ".sqlite", ".duckdb")):
        payloads = []
        try:
            _, _, records = read_records(SourceFile.on_disk(str(path)))
            for record in records:
                if record.kind != "json":
                    continue
                payloads.append(record.payload if record.payload is not None else record.raw)
                if record.envelope is not None:
                    payloads.append(record.envelope)
        except Exception:
            continue
        if payloads:
            cases.append(json_case("samples", decode=payloads, write=payloads) | {"file": relative(path)})
    return cases


# --- read -------------------------------------------------------------------------------------------


def make_read() -> list[dict]:
    import gzip
    import os
    import shutil
    import sqlite3
    import tempfile

    from hypothesis import strategies as st

    from archiver.read import containers
    from archiver.read.containers import SourceFile
    from tests import test_core_read as R

    temporary = Path(tempfile.mkdtemp(prefix="freeze-read-"))
    cases = []

    def in_memory(test, data, name, limits=R.DEFAULTS, **more):
        output = R.python_read(SourceFile(name, data=data), limits)
        return case(test, {"data": data, "name": name, "limits": limits}, output, **more)

    def on_disk(test, data, name, limits=R.DEFAULTS):
        path = temporary / "input"
        path.write_bytes(data)
        output = R.python_read(SourceFile(name, location=str(path)), limits)
        return case(test, {"data": data, "name": name, "limits": limits}, frozen.relocated(output, temporary))

    common = {"data": R.line_structures(), "name": R.names, "limits": R.small_limits()}
    for drawn_case in drawn(st.fixed_dictionaries(common), 150):
        cases.append(in_memory("lines_in_memory", **drawn_case))
    for drawn_case in drawn(st.fixed_dictionaries(common), 60):
        cases.append(on_disk("lines_on_disk", **drawn_case))

    @st.composite
    def gzipped(draw):
        data, name, limits = draw(R.line_structures()), draw(R.names), draw(R.small_limits())
        members, level = draw(st.integers(1, 3)), draw(st.sampled_from([0, 1, 9]))
        cut = len(data) // members
        parts = [data[i * cut : (i + 1) * cut if i < members - 1 else len(data)] for i in range(members)]
        stored = b"".join(gzip.compress(part, compresslevel=level, mtime=0) for part in parts)
        return {"data": stored, "name": name, "limits": limits}

    for drawn_case in drawn(gzipped(), 150):
        cases.append(in_memory("gzip_in_memory", **drawn_case))
    damaged = {"data": R.damaged_gzip(), "name": R.names, "limits": R.small_limits()}
    for drawn_case in drawn(st.fixed_dictionaries(damaged), 100):
        cases.append(in_memory("damaged_gzip_in_memory", **drawn_case))
    for drawn_case in drawn(st.fixed_dictionaries(damaged), 40):
        cases.append(on_disk("damaged_gzip_on_disk", **drawn_case))
    spool = st.tuples(R.segments(), R.small_limits(), st.booleans())
    for data, limits, compress in drawn(spool, 80):
        stored = gzip.compress(data, mtime=0) if compress else data
        cases.append(in_memory("spool_segments", stored, "segment-000001.a2a", limits))

    # the large streams: the test makes their bytes again from the description given here
    def large(test, description: dict, source: SourceFile, limits: dict):
        return case(test, description, R.python_read(source, limits), long=0)

    for fraction in [0.1, 0.37, 0.5, 0.73, 0.999]:
        for damage in ["flip", "truncate"]:
            at = int(len(R.LARGE_STORED) * fraction)
            if damage == "flip":
                stored = R.LARGE_STORED[:at] + bytes([R.LARGE_STORED[at] ^ 0x55]) + R.LARGE_STORED[at + 1 :]
            else:
                stored = R.LARGE_STORED[:at]
            for name in ["big.jsonl", "big.json"]:
                described = {"fraction": fraction, "damage": damage, "name": name}
                cases.append(large("large_damaged", described, SourceFile(name, data=stored), R.DEFAULTS))
    for name, limits in [
        ("big.jsonl", dict(R.DEFAULTS, gzip=1_500_000)),
        ("big.json", dict(R.DEFAULTS, document=1_700_000, record=1_700_000)),
        ("big.json", dict(R.DEFAULTS, document=5_000_000, gzip=3_100_000)),
    ]:
        source = SourceFile(name, data=R.LARGE_STORED)
        cases.append(large("large_gzip_limits", {"name": name, "limits": limits}, source, limits))
    big = temporary / "big"
    big.write_bytes(R.LARGE)
    sse = b"".join(b": ping\r\ndata: " + line.rstrip(b"\n") + b"\r\n\r\n" for line in R.LARGE.splitlines(keepends=True))
    (temporary / "big.sse").write_bytes(sse)
    for file, name, limits in [
        ("big", "big.jsonl", R.DEFAULTS),
        ("big", "big.json", dict(R.DEFAULTS, record=1_500_000, document=1_500_000)),
        ("big", "big.json", dict(R.DEFAULTS, record=5_000_000, document=5_000_000)),
        ("big.sse", "big.sse", R.DEFAULTS),
    ]:
        source = SourceFile(name, location=str(temporary / file))
        cases.append(large("large_on_disk", {"file": file, "name": name, "limits": limits}, source, limits))
    data = (b'{"a": "' + b"z" * 5000 + b'"}\n') * 600
    stored = gzip.compress(data, mtime=0)
    for at in (len(stored) // 3, len(stored) // 2, len(stored) - 20):
        broken = stored[:at] + bytes([stored[at] ^ 0xFF]) + stored[at + 1 :]
        for name, limits in [("z.jsonl", R.DEFAULTS), ("z.json", dict(R.DEFAULTS, record=30 << 20, document=30 << 20))]:
            described = {"at": at, "name": name, "limits": limits}
            cases.append(large("compressed_flipped", described, SourceFile(name, data=broken), limits))
    data = b"a" * 3_000_000 + b"\n" + b'{"b": 1}\n' + b"c" * 2_500_000
    limits = dict(R.DEFAULTS, record=2 << 20, document=2 << 20)
    sse = b"data: " + b"d" * 2_200_000 + b"\n\n" + b"data: 1\r\rdata: 2\n"
    for form, stored, name in [
        ("lines", data, "long.jsonl"),
        ("gzip", gzip.compress(data, mtime=0), "long.jsonl"),
        ("sse", sse, "long"),
    ]:
        described = {"form": form, "name": name, "limits": limits}
        cases.append(large("long_lines", described, SourceFile(name, data=stored), limits))

    # files that cannot be read
    fifo, loop, dangling = temporary / "fifo", temporary / "loop", temporary / "dangling"
    os.mkfifo(fifo)
    os.symlink(loop, loop)
    os.symlink(temporary / "nowhere", dangling)
    for label, path in [
        ("missing", temporary / "missing.jsonl"),
        ("directory", temporary),
        ("fifo", fifo),
        ("loop", loop),
        ("dangling", dangling),
        ("/dev/null", Path("/dev/null")),
    ]:
        output = R.python_read(SourceFile(str(path), location=str(path)), R.DEFAULTS)
        cases.append(case("unreadable_files", label, frozen.relocated(output, temporary)))
    path = os.path.join(os.fsencode(temporary), b"bad\xff.jsonl")
    with open(path, "wb") as handle:
        handle.write(b'{"a": 1}\n')
    source = SourceFile.on_disk(os.fsdecode(path))
    cases.append(
        case(
            "name_not_utf8",
            source.path.replace(str(temporary), "<DIR>"),
            frozen.relocated(R.python_read(source, R.DEFAULTS), temporary),
        )
    )
    data = b" " * 5000 + b'{"a": 1}\n{"b": 2}\n'
    (temporary / "spaces").write_bytes(data)
    source = SourceFile(str(temporary / "spaces"), location=str(temporary / "spaces"))
    cases.append(case("head_on_disk", data, frozen.relocated(R.python_read(source, R.DEFAULTS), temporary)))
    cases.append(in_memory("head_in_memory", data, "spaces"))

    # sources read elsewhere
    cases.append(
        case(
            "unreadable_source",
            "cannot read the file: gone",
            R.python_read(SourceFile("x", unreadable="cannot read the file: gone"), R.DEFAULTS),
        )
    )
    store = temporary / "tasks.sqlite"
    with sqlite3.connect(store) as con:
        con.execute("CREATE TABLE tasks (id TEXT, context_id TEXT, status TEXT, artifacts BLOB)")
        con.execute("INSERT INTO tasks VALUES ('t1', 'c1', '{\"state\": \"completed\"}', x'c3a9ff')")
    con.close()
    output = R.python_read(SourceFile(str(store)), R.DEFAULTS)
    cases.append(case("store_rows", "tasks.sqlite", frozen.relocated(output, temporary)))
    bad = temporary / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x01" * 200)
    output = R.python_read(SourceFile(str(bad)), R.DEFAULTS)
    cases.append(case("refused_store", "bad.sqlite", frozen.relocated(output, temporary)))

    # every sample and test-corpus file: by its path from the repository's root
    for path in corpus(skip=(".py", ".pyc", ".sqlite")):
        name, raw = relative(path), path.read_bytes()
        expected = {
            "disk": R.python_read(SourceFile(name, location=str(path)), R.DEFAULTS),
            "memory": R.python_read(SourceFile(name, data=raw), R.DEFAULTS),
            "gzip": R.python_read(SourceFile(name + ".gz", data=gzip.compress(raw, mtime=0)), R.DEFAULTS),
        }
        cases.append(case("samples", name, expected, sha256=frozen.sha256_of(path), long=0))

    divergence = b'{"n": ' + b"9" * 400 + b'}\n{"n": 1}\n'
    cases.append(in_memory("divergence", divergence, "x"))
    cases.append(in_memory("divergence", divergence, "x.jsonl"))
    heads = [b"", b"\xef\xbb\xbf", b"SQLite format 3\x00", b"\x00x", b": a2a-record {", b"\n data: x", b"{}"]
    for head in heads:
        cases.append(case("detect", head, containers.detect(head, "x")))
    shutil.rmtree(temporary)
    return cases


# --- understand -------------------------------------------------------------------------------------


def make_understand() -> list[dict]:
    import tempfile

    from archiver.read.decode import decode
    from archiver.understand.recorded import is_envelope
    from hypothesis import strategies as st

    from archiver.read.containers import SourceFile, read_records
    from tests import test_core_understand as U

    def outcome(call, *args) -> list:
        """As the differential test's `outcome`: ["read", the result] or ["refused", the reason]."""
        try:
            result = call(*args)
        except RecursionError:
            raise
        except Exception as exc:
            return ["refused", U.reason(exc)]
        return ["read", result]

    def events(test, value, **more):
        return case(test, value, outcome(U.python_events, value), **more)

    def recorded(test, envelope, event, **more):
        return case(test, [envelope, event], outcome(U.python_recorded, envelope, event), **more)

    def row(test, value, **more):
        return case(test, value, outcome(U.python_store_row, value), **more)

    cases = []
    for value in drawn(U.records, 100):
        cases.append(events("records", value))
    for value in drawn(U.a2a_objects(), 100):
        cases.append(events("dialects", value))
    for value in drawn(U.js_objects(), 100):
        cases.append(events("javascript", value))
    for envelope, event in drawn(st.tuples(U.envelopes(), st.one_of(st.none(), U.records)), 100):
        cases.append(recorded("envelopes", envelope, event))
    for value in drawn(U.store_rows(), 100):
        cases.append(row("store_rows", value))
    for value in drawn(U.timestamps, 300):
        cases.append(case("timestamps", value, outcome(U.python_timestamp, value)))
    for value in U.EDGES:
        cases.append(events("edges", value))
    for envelope, event in U.ENVELOPE_EDGES:
        cases.append(recorded("envelope_edges", envelope, event))
    for path in corpus():
        try:
            _container, _compression, records = read_records(SourceFile.on_disk(str(path)))
            for record in records:
                if record.kind not in ("json", "row"):
                    continue
                more = {"file": relative(path), "locator": record.locator}
                try:
                    if record.envelope is not None:
                        envelope = decode(record.envelope)
                        event = decode(record.payload) if record.payload is not None else None
                        cases.append(recorded("samples", envelope, event, **more))
                    elif record.kind == "row":
                        cases.append(row("samples_rows", record.value, **more))
                    else:
                        value = decode(record.payload if record.payload is not None else record.raw)
                        if is_envelope(value):
                            cases.append(recorded("samples", value, None, **more))
                        else:
                            cases.append(events("samples_events", value, **more))
                except ValueError:  # not JSON: the decoder's stage
                    continue
        except Exception:
            continue
    # (the reference test's helper makes the segments of the checkout's samples: the same files, at the tag)
    with tempfile.TemporaryDirectory() as temporary:
        for path in U.spool_segments(Path(temporary) / "spool"):
            _container, _compression, records = read_records(SourceFile.on_disk(str(path)))
            for record in records:
                if record.kind != "json":
                    continue
                more = {"file": path.name, "locator": record.locator}
                if record.envelope is not None:
                    event = decode(record.payload) if record.payload is not None else None
                    cases.append(recorded("spool_segments", decode(record.envelope), event, **more))
                else:
                    cases.append(recorded("spool_segments", decode(record.payload or record.raw), None, **more))
    return cases


# --- cite -------------------------------------------------------------------------------------------


def make_cite() -> list[dict]:
    import dataclasses

    from archiver.cite.claims import numeric_leaves
    from archiver.cite.parts import judged
    from archiver.understand import assemble
    from archiver.understand.events import events_of
    from hypothesis import strategies as st

    from archiver.cite.citations import MEDIA_TYPE
    from tests import test_core_cite as C

    def sample_records(path: Path) -> list:
        """The differential test's `sample_records`, with the Python `_events` it meant: at the tag,
        `archiver.prepare` calls the core and has no `_events` (the test's `except Exception` then made
        every file an empty list, so that test compared nothing); `tests/python_prepare.py` has it."""
        from tests.python_prepare import _events

        from archiver.read.containers import SourceFile, read_records

        records = []
        try:
            _, _, reader = read_records(SourceFile.on_disk(str(path)))
            for record in reader:
                if record.kind == "filler":
                    continue
                try:
                    rpc_id, events = _events(record)
                except (ValueError, RecursionError, TypeError):
                    continue
                described = [C.describe(e) for e in events]
                records.append((f"r{record.seq}", rpc_id, described, record.locator, len(record.raw)))
        except OSError:  # a file that cannot be read has no events to compare
            return []
        return records

    def citation(test, data, media_type, **more):
        return case(test, [data, media_type], C.python_citation(data, media_type), **more)

    def assembly(test, records, held, kept, events_of=C.described_events, **more):
        output = C.python_assembly(records, held, kept, events_of)
        if events_of is not C.described_events or not C.one_task_a_record(records):
            output = C._copies_sorted(output)
        return case(test, {"records": records, "held": held, "kept": kept}, output, **more)

    cases = []
    example = {
        "study": "Q3",
        "period": "2026 Q1",
        "base": {"name": "all adults", "n": 1200},
        "source": {"table": "t", "column": "c", "function": "mean"},
        "fielded": "2026-04-02/2026-04-19",
        "weight": "census",
        "warnings": ["small base"],
        "x": {"y": [1, 2.0]},
    }
    for data, media_type in [(example, MEDIA_TYPE), *drawn(st.tuples(C.CITATIONS, C.MEDIA_TYPES), 150)]:
        cases.append(citation("citations", data, media_type))
    for data, media_type in drawn(st.tuples(C.JSON, C.MEDIA_TYPES), 150):
        cases.append(citation("citation_data", data, media_type))
    for fielded in drawn(C.FIELDED, 150):
        cases.append(
            citation(
                "field_periods", {"study": "s", "period": "p", "base": {"name": "b", "n": 1}, "fielded": fielded}, None
            )
        )
    for year in (1, 2, 2015, 2020, 2026, 9998, 9999):
        for week in (0, 1, 52, 53, 54):
            for day in (0, 1, 7, 8):
                for text in (f"{year:04d}-W{week:02d}-{day}", f"{year:04d}W{week:02d}{day}", f"{year:04d}W{week:02d}"):
                    cases.append(
                        citation("weeks", {"study": "s", "period": "p", "base": {"n": 1}, "fielded": text}, None)
                    )
    for n in [1.5, -2.5, 1e-7, 1e16 + 0.5, 123456.789, -0.0, -1e300, -(2**70), -(10**30)]:
        cases.append(citation("base_n", {"study": "s", "period": "p", "base": {"name": "b", "n": n}}, MEDIA_TYPE))
    for data in drawn(C.CLAIM_DATA, 150):
        cases.append(case("numeric_leaves", data, numeric_leaves(data)))
    deep = 7
    for level in range(900):
        deep = [deep, level] if level % 2 else {"~/": deep, "n": 1.5}
    cases.append(case("numeric_leaves_deep", 900, numeric_leaves(deep)))
    judged_inputs = st.tuples(
        st.sampled_from(["data", "text", "file", "unknown"]),
        st.one_of(C.CITATIONS, C.CLAIM_DATA),
        C.MEDIA_TYPES,
        st.sampled_from(["agent", "user", "unknown"]),
    )
    for given in drawn(judged_inputs, 150):
        found, leaves = judged(*given)
        python = None if found is None else {**dataclasses.asdict(found), "valid": found.valid}
        cases.append(case("judged", list(given), [python, leaves]))
    for records in drawn(C.record_lists(), 60):
        cases.append(assembly("assembly", records, assemble.HELD_BYTES, assemble.KEPT_BYTES))
    put_aside = st.tuples(C.record_lists(), st.integers(0, 400), st.sampled_from([0, 1, 150, 10**9]))
    for records, held, kept in drawn(put_aside, 60):
        cases.append(assembly("assembly_put_aside", records, held, kept))
    records = []  # as the test makes them again: past LOOSE_BATCH loose messages, most tasks put aside
    for index in range(1500):
        task = f"t{index % 97}"
        message = {
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
        }
        update = {
            "event": "status_update",
            "task_id": task,
            "context_id": "c",
            "status": {"state": "working", "timestamp": index, "message": None},
        }
        records.append((f"r{index}", index, [update, message], f"line {index + 1}", 100))
    many = assembly("many_loose", records, 1000, assemble.KEPT_BYTES)
    cases.append(many | {"in": {"held": 1000, "kept": assemble.KEPT_BYTES}})
    status = {"state": "working", "timestamp": None, "message": None}
    conflict = [
        ("r1", None, [{"event": "status_update", "task_id": "t1", "context_id": "c1", "status": status}], "line 1", 10),
        (
            "r2",
            None,
            [
                {"event": "status_update", "task_id": "t2", "context_id": "c1", "status": status},
                {"event": "status_update", "task_id": "t1", "context_id": "c2", "status": status},
            ],
            "line 2",
            10,
        ),
        ("r3", None, [{"event": "status_update", "task_id": "t1", "context_id": "c3", "status": status}], "line 3", 10),
    ]
    for held in (assemble.HELD_BYTES, 0):
        cases.append(assembly("context_conflict", conflict, held, assemble.KEPT_BYTES))
    for path in corpus():
        if relative(path).startswith("sample_transcripts/") and path.suffix in (".md", ".js", ".json"):
            continue  # as the differential tests: no .md, .js or .json file of the samples
        more = {"file": relative(path)}
        values = C.sample_values(path)
        for held in (assemble.HELD_BYTES, 64):
            cases.append(assembly("samples_decoded", values, held, assemble.KEPT_BYTES, events_of, **more))
        records = sample_records(path)
        for held in (assemble.HELD_BYTES, 64):
            cases.append(assembly("samples", records, held, assemble.KEPT_BYTES, **more))
        parts = [
            [part.kind, part.data, part.media_type]
            for _, _, described, _, _ in records
            for event in map(C.event_of, described)
            for part in C._parts_of(event)
        ]
        output = [
            [
                judged(kind, data, media_type, "agent")[1],
                C.python_citation(data, media_type) if kind == "data" else None,
            ]
            for kind, data, media_type in parts
        ]
        cases.append(case("sample_parts", parts, output, **more))
    return cases


# --- index ------------------------------------------------------------------------------------------


def make_index() -> list[dict]:
    import contextlib
    import gzip
    import hashlib
    import tempfile

    import duckdb
    import orjson
    import pyarrow as pa
    from archiver.load.rows import arrow_schemas
    from hypothesis import strategies as st

    from archiver.load import rows as rows_module
    from archiver.load.versions import new_version
    from archiver.read.containers import SourceFile, StoreTable
    from archiver.store import migrations
    from tests import python_prepare
    from tests import test_core_index as I

    class FixedMoment(I.datetime):
        @classmethod
        def now(cls, tz=None):
            return I.MOMENT

    python_prepare.datetime = FixedMoment
    python_prepare.report_read = lambda *_: None
    temporary = Path(tempfile.mkdtemp(prefix="freeze-index-"))
    con = duckdb.connect(str(temporary / "index.duckdb"))
    migrations.upgrade(con)
    schemas = arrow_schemas(con)
    con.close()

    def named(path: Path, name: str):
        """A file on disk as the index names it: by `name` (relative: the same wherever the repository is)."""
        source = SourceFile(name, location=str(path))
        return source, version_of(source, path.read_bytes())

    def version_of(source, data: bytes):
        return new_version(source.path, hashlib.sha256(data).hexdigest(), len(data), None, None)

    def prepared(files, schemas=schemas, batch: dict | None = None) -> dict:
        saved = rows_module.BATCH_BYTES, rows_module.BATCH_ROWS
        if batch:
            rows_module.BATCH_BYTES, rows_module.BATCH_ROWS = batch["batch_bytes"], batch["batch_rows"]
        try:
            tables, outcomes = I.python_side(files, schemas)
        finally:
            rows_module.BATCH_BYTES, rows_module.BATCH_ROWS = saved
        return {"outcomes": outcomes, "tables": [frozen.table_form(name, table) for name, table in tables]}

    def files_case(test, paths: list[Path], batch=None, **more):
        names = [relative(path) for path in paths]
        output = prepared([named(path, name) for path, name in zip(paths, names, strict=True)], batch=batch)
        given = {"files": names, "sha256": [frozen.sha256_of(path) for path in paths], "batch": batch}
        return {"test": test, "in": given, **more, "out": output}

    def data_case(test, items: list[tuple[str, bytes]]):
        """Files written to a temporary folder from the bytes the case holds, named by their file names."""
        folder = Path(tempfile.mkdtemp(dir=temporary))
        files = []
        for name, data in items:
            (folder / name).write_bytes(data)
            files.append(named(folder / name, name))
        return {"test": test, "in": [list(item) for item in items], "out": prepared(files)}

    cases = []
    corpus_files = corpus()
    for path in corpus_files:
        cases.append(files_case("corpus", [path]))
    small = [path for path in corpus_files if path.stat().st_size < 200_000][:40]
    cases.append(files_case("together", small))
    batch = {"batch_bytes": 3_000, "batch_rows": 7}
    for name in ("kestrel-mobility/rpc-v1.jsonl", "versant-insights/stream-v1.sse", "legacy-funnel/rpc-v03.jsonl"):
        cases.append(files_case("batches", [ROOT / "sample_transcripts" / name], batch))
    kestrel = sorted((ROOT / "sample_transcripts" / "kestrel-mobility").iterdir())
    cases.append(files_case("batches", kestrel, batch))

    data = b'{"jsonrpc": "2.0", "id": 1, "result": {"id": "t1", "contextId": "c", "status": {"state": "completed"}}}\n'
    stdin = SourceFile("<stdin>", data=data)
    gone = SourceFile("gone.jsonl", unreadable="cannot read the file: No such file or directory")
    table = StoreTable("postgresql", "tasks", ("id",))
    rows = (ROOT / "tests" / "stores" / "a2a-js-rows.json").read_bytes()
    store_rows = b"\n".join(orjson.dumps(row) for row in orjson.loads(rows)["first"])
    store = SourceFile("postgresql://db/tasks", data=store_rows, store=table)
    sources = [(stdin, data), (gone, b""), (store, store_rows)]
    for source, raw in sources:
        cases.append({"test": "elsewhere", "in": [source.path], "out": prepared([(source, version_of(source, raw))])})
    together = [(source, version_of(source, raw)) for source, raw in sources]
    cases.append({"test": "elsewhere", "in": [source.path for source, _ in sources], "out": prepared(together)})

    generate = _this_repository("benchmarks/generate.py").generate  # the corpus the test makes, not the tag's
    generate(temporary / "corpus", tasks=60, tasks_per_file=20)
    generated = sorted(p for p in (temporary / "corpus").rglob("*") if p.is_file())
    named_generated = [(path, path.relative_to(temporary / "corpus").as_posix()) for path in generated]
    for path, name in named_generated:
        digest = frozen.sha256_of(path)
        output = prepared([named(path, name)])
        cases.append({"test": "generated_corpus", "in": {"files": [name], "sha256": [digest]}, "out": output})
    output = prepared([named(path, name) for path, name in named_generated])
    digests = [frozen.sha256_of(path) for path in generated]
    cases.append(
        {"test": "generated_corpus", "in": {"files": [n for _, n in named_generated], "sha256": digests}, "out": output}
    )

    huge = "x" * (5 * 2**20)
    task = I.v1_task("big", [{"text": "small"}, {"url": "https://a/b", "raw": None, "data": None, "file": None}])
    task["artifacts"][0]["parts"] = [
        {"text": "small"},
        {"raw": huge, "filename": "big.bin", "mediaType": "x/y"},
        {"text": "after"},
    ]
    raw = orjson.dumps(I.jsonrpc_result({"kind": "task", **task})) + b"\n" + b'{"no": 1}\n'
    (temporary / "huge.jsonl").write_bytes(raw)
    expected, _ = I.python_side([named(temporary / "huge.jsonl", "huge.jsonl")], schemas)
    by_name = {}
    for name in dict.fromkeys(name for name, _ in expected):
        by_name[name] = frozen.table_form(name, pa.concat_tables([t for n, t in expected if n == name]))
    cases.append({"test": "huge", "in": hashlib.sha256(raw).hexdigest(), "out": by_name})

    for items, name, compressed in drawn(
        st.tuples(I.records, st.sampled_from(sorted(I.CONTAINERS)), st.booleans()), 100
    ):
        data = I.CONTAINERS[name](items)
        stored = gzip.compress(data, mtime=0) if compressed else data
        cases.append(data_case("generated", [(name + ".gz" if compressed else name, stored)]))
    for files in drawn(st.lists(I.records, min_size=2, max_size=4), 30):
        cases.append(
            data_case("generated_together", [(f"f{n}.jsonl", I.jsonl(items)) for n, items in enumerate(files)])
        )

    broken = dict(schemas)
    broken["parts"] = pa.schema([f.with_type(pa.int64()) if f.name == "data" else f for f in schemas["parts"]])
    rpc = ROOT / "sample_transcripts" / "versant-insights" / "rpc-v1.jsonl"
    expected, outcomes = I.python_side([named(rpc, relative(rpc))], broken)
    cases.append(
        {
            "test": "broken_schema",
            "in": relative(rpc),
            "out": {
                "names": [name for name, _ in expected],
                "outcomes": outcomes,
                "first": frozen.table_form(expected[0][0], expected[0][1].drop_columns("reason")),
            },
        }
    )
    clean = temporary / "clean.jsonl"
    clean.write_bytes(b'{"no": "a2a"}\n')
    expected, outcomes = I.python_side([named(clean, "clean.jsonl"), named(rpc, relative(rpc))], broken)
    cases.append(
        {
            "test": "broken_chunk",
            "in": ["clean.jsonl", relative(rpc)],
            "out": {
                "names": [name for name, _ in expected],
                "outcomes": outcomes,
                "first": frozen.table_form(*expected[0]),
            },
        }
    )
    with contextlib.suppress(OSError):
        import shutil

        shutil.rmtree(temporary)
    return cases


def main(argv: list[str]) -> None:
    if not argv or argv[0].startswith("-"):
        raise SystemExit(__doc__)
    reference = Path(argv[0]).resolve()
    taught_since_the_tag(reference)
    groups = argv[1:] or list(GROUPS)
    if len(groups) > 1 or os.environ.get("PYTHONHASHSEED") != "0":
        # each group in a fresh interpreter: hypothesis draws the same examples only from the same state
        for group in groups:
            environment = {**os.environ, "PYTHONHASHSEED": "0"}
            subprocess.run([sys.executable, __file__, str(reference), group], check=True, env=environment)
        return
    if not (reference / "archiver" / "canonical.py").is_file():
        raise SystemExit(f"{reference} is no checkout of python-normaliser-last (no archiver/canonical.py)")
    sys.path[:0] = [str(reference)]
    for module in [name for name in sys.modules if name == "tests" or name.startswith(("archiver", "tests."))]:
        del sys.modules[module]
    import archiver
    import tests

    assert Path(archiver.__file__).is_relative_to(reference), archiver.__file__
    assert Path(tests.__file__).is_relative_to(reference), tests.__file__
    for group in groups:
        cases = globals()[f"make_{group}"]()
        path = frozen.write(group, cases)
        print(f"{path.relative_to(ROOT)}: {len(cases)} cases, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
