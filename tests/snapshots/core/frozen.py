"""The snapshots of `tests/test_core_*.py` (this folder's `*.jsonl.gz`, written by `make.py`): how a case's
input and the reference's output are written, read back, and compared with the core's output.

Values are written as Python's `json` writes them (ASCII, floats by `repr`, so `1`, `1.0` and `True` differ,
`-0.0` keeps its sign, an integer of any size is exact, a lone surrogate is a `\\ud800` escape, a dict keeps
the order of its keys), with bytes, dates and datetimes as tagged objects. Comparing the texts of two values
compares them exactly, types and order included. An output whose text is long is stored as the SHA-256 of
that text (the same exact comparison, without the bulk)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import gzip
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BYTES, DATE, DATETIME = "\x00bytes", "\x00date", "\x00datetime"
LONG = 3000
"""Characters past which an expected output is stored as the SHA-256 of its text."""


@contextlib.contextmanager
def _room():
    """Stack room for values nested ~1000 levels deep (the decoder's limits are tested with them), and
    integers of any length written and read (past `int`'s 4300 digits: the core reads them, issue 39)."""
    limit, digits = sys.getrecursionlimit(), sys.get_int_max_str_digits()
    sys.setrecursionlimit(max(limit, 20_000))
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        sys.set_int_max_str_digits(digits)


def _tagged(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {BYTES: base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dt.datetime):
        return {DATETIME: value.isoformat()}
    if isinstance(value, dt.date):
        return {DATE: value.isoformat()}
    raise TypeError(f"no snapshot form for {type(value).__name__}")


def _untagged(obj: dict):
    if len(obj) == 1:
        if BYTES in obj:
            return base64.b64decode(obj[BYTES])
        if DATE in obj:
            return dt.date.fromisoformat(obj[DATE])
        if DATETIME in obj:
            return dt.datetime.fromisoformat(obj[DATETIME])
    return obj


def text(value) -> str:
    """The exact text of a value (see the module's docstring)."""
    with _room():
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=_tagged)


def value(written: str):
    with _room():
        return json.loads(written, object_hook=_untagged)


def expected(output, *, long: int = LONG) -> dict:
    """How an output is stored: {"out": value}, or {"out_sha256": ...} for a long one."""
    written = text(output)
    if len(written) > long:
        return {"out_sha256": hashlib.sha256(written.encode()).hexdigest()}
    return {"out": output}


def matches(output, case: dict) -> bool:
    """Whether an output is the one a case stored (exactly)."""
    written = text(output)
    if "out_sha256" in case:
        return hashlib.sha256(written.encode()).hexdigest() == case["out_sha256"]
    return written == text(case["out"])


def write(name: str, cases: list[dict]) -> Path:
    """The cases of one test file, one JSON object a line, gzip-compressed (no timestamp in the header, so
    that the same cases give the same bytes)."""
    path = HERE / f"{name}.jsonl.gz"
    body = "".join(text(case) + "\n" for case in cases).encode()
    path.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    return path


def read(name: str) -> dict[str, list[dict]]:
    """A snapshot's cases by the name of the test that compares them."""
    by_test: dict[str, list[dict]] = {}
    with gzip.open(HERE / f"{name}.jsonl.gz", "rt", encoding="ascii") as handle:
        for line in handle:
            case = value(line)
            by_test.setdefault(case["test"], []).append(case)
    return by_test


def mismatches(cases: list[dict], output_of) -> list[str]:
    """The cases whose output (`output_of(case["in"])`) is not the one stored, described (at most 5)."""
    found = []
    for number, case in enumerate(cases):
        output = output_of(case["in"])
        if not matches(output, case):
            shown = text(case["in"])
            want = text(case["out"]) if "out" in case else "sha256 " + case["out_sha256"]
            found.append(
                f"case {number}: input {shown[:300]}\n  got      {text(output)[:600]}\n  expected {want[:600]}"
            )
            if len(found) >= 5:
                break
    return found


def relocated(output, directory) -> object:
    """An output with a temporary directory's path (that differs from run to run) written as <DIR>."""
    return value(text(output).replace(str(directory), "<DIR>"))


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_form(name: str, table, short: int = 200) -> dict:
    """An Arrow table as the index snapshots hold it: its name, rows, schema and each column's values (the
    SHA-256 of their text where that is longer than `short`)."""
    columns = {}
    for column in table.column_names:
        written = text(table[column].to_pylist())
        columns[column] = written if len(written) <= short else "sha256:" + hashlib.sha256(written.encode()).hexdigest()
    schema = table.schema.to_string(show_field_metadata=False, show_schema_metadata=False)
    return {"table": name, "rows": table.num_rows, "schema": schema, "columns": columns}
