"""JSON and JSON Lines of a listing, written as bytes, a batch of items at a time.

Items are spelled once, by one path per listing: DuckDB's (`Listing.spelled`, where the benchmark's
queries and the audit need speed) or orjson's. What surrounds them is orjson's, indented by two.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict
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
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value, ensure_ascii=False, default=str, indent=2 if indent else None).encode()


def results_document(ident: str, results: list) -> dict:
    """What `archiver show ID --format json` prints and `/result/ID.json` answers: the id asked for and each
    result as the API gives it (`Archive.results`: `query.transcript.ResultView`)."""
    return {"id": ident, "results": [asdict(view) for view in results]}


def plain(value: Any) -> bytes:
    """A value as JSON, compact: dates and other values JSON has no type for as their text."""
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)
