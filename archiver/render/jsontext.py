"""JSON and JSON Lines of a listing, written as bytes, a batch of items at a time.

Items are spelled once, by one path per listing: DuckDB's (`Listing.spelled`, where the benchmark's
queries and the audit need speed) or orjson's. What surrounds them is orjson's, indented by two.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from itertools import islice
from typing import Any, BinaryIO

import orjson

from ..query.listing import Chunks, Listing

BATCH_ITEMS = 2048


def write_json(listing: Listing, out: BinaryIO) -> int:
    """A bare array of compact rows, one a line; or {name: [items], "summary": ...} indented by two."""
    if listing.name is None:
        out.write(b"[")
        count = write_items(listing, out, ",\n", None)
        out.write(b"\n]\n" if count else b"]\n")
        return count
    skeleton = dumps({listing.name: [], "summary": listing.summary}, indent=True)
    return write_spliced(
        out, skeleton, listing.name, 1, lambda separator, depth: write_items(listing, out, separator, depth)
    )


def write_jsonl(listing: Listing, out: BinaryIO) -> int:
    count = write_items(listing, out, "\n", None)
    if count:
        out.write(b"\n")
    return count


def write_spliced(out: BinaryIO, skeleton: bytes, key: str, depth: int, write: Callable[[str, int], int]) -> int:
    """Write `skeleton` (indented JSON) with the empty list at `key`, `depth` levels down, replaced by the
    items `write(separator, item_depth)` writes."""
    empty = f'"{key}": []'.encode()
    before, after = skeleton.split(empty, 1)
    out.write(before + empty[:-1])
    count = write(",\n" + "  " * (depth + 1), depth + 1)
    out.write((b"\n" + b"  " * depth + b"]" if count else b"]") + after + b"\n")
    return count


def write_items(listing: Listing, out: BinaryIO, separator: str, depth: int | None) -> int:
    """The listing's items, each after `separator`, in its one spelling; how many."""
    if listing.spelled is not None:
        return write_chunks(out, listing.spelled(separator, depth))
    fields = listing.fields
    return write_chunks(out, spelled(({f: row.get(f) for f in fields} for row in listing.rows), separator, depth))


def write_chunks(out: BinaryIO, chunks: Chunks) -> int:
    """Write the chunks, the first item without its separator's leading comma or newline; how many items."""
    count = 0
    for items, text in chunks:
        if items:
            out.write(text[1:] if count == 0 else text)
            count += items
    return count


def spelled(values: Iterable[Any], separator: str, depth: int | None) -> Chunks:
    """`values` spelled by orjson, each after `separator`, in chunks of `BATCH_ITEMS`."""
    values, before = iter(values), separator.encode()
    while batch := list(islice(values, BATCH_ITEMS)):
        yield len(batch), b"".join(before + item_text(value, depth) for value in batch)


def item_text(value: Any, depth: int | None) -> bytes:
    """`value` as orjson writes it compact (depth None), or indented as it would be `depth` levels down."""
    if depth is None:
        return dumps(value)
    return dumps(value, indent=True).replace(b"\n", b"\n" + b"  " * depth)


def dumps(value: Any, indent: bool = False) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0, default=str)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits; nested past orjson's 254 levels
        return _deep(value, indent=2 if indent else None, separators=None)


def results_document(ident: str, results: list) -> dict:
    """What `archiver show ID --format json` prints and `/result/ID.json` answers: the id asked for and each
    result as the API gives it (`Archive.results`: `query.transcript.ResultView`). The views become dicts, their
    Parts' values as they are (`asdict` copied each value again, recursively: a Part nested 990 levels deep ended
    the command in Python's recursion limit)."""
    return {"id": ident, "results": [_fields(view) for view in results]}


def _fields(value: Any) -> Any:
    """A dataclass (and a list of them) as a dict of its fields; any other value as it is."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _fields(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list) and value and is_dataclass(value[0]):
        return [_fields(item) for item in value]
    return value


def plain(value: Any) -> bytes:
    """A value as JSON, compact: dates and other values JSON has no type for as their text."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits; nested past orjson's 254 levels
        return _deep(value, indent=None, separators=(",", ":"))  # as orjson's compact


DEEPEST = 1024
"""The deepest a stored value nests (the core refuses a record nested deeper: `json/decode.rs`'s NESTING_LIMIT)."""


def _deep(value: Any, indent: int | None, separators: tuple[str, str] | None) -> bytes:
    """`value` as JSON by the standard library, whose encoder counts each level against Python's recursion limit:
    raised while it runs by twice the deepest a stored value nests, which its C stack holds."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + 2 * DEEPEST)
    try:
        return json.dumps(value, ensure_ascii=False, default=str, indent=indent, separators=separators).encode()
    finally:
        sys.setrecursionlimit(before)
