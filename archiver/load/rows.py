"""The rows one source file contributes to each table of the index."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

import pyarrow as pa

from ..canonical import compact_json, content_hash, key_hash
from ..cite.citations import CONTENT_FIELDS, EXTENSION_URI, MEDIA_TYPE, Citation
from ..cite.parts import judged
from ..read.records import Record
from ..read.version import SourceVersion
from ..store.tables import INDEX_TABLES
from ..understand.assemble import FileAssembly, StoredCopy
from ..understand.model import ErrorResponse, Part
from .spool import Spool


def arrow_schemas(con) -> dict[str, pa.Schema]:
    """Arrow schemas of the index tables as the migrated archive declares them.

    JSON columns are typed as Arrow's JSON extension: DuckDB takes such a value as it is, where a plain
    string is parsed again to be checked (a 300 MB file Part asked for 1 GiB more to be stored)."""
    return {
        name: _json_typed(con, name, con.execute(f"SELECT * FROM {name} LIMIT 0").arrow().schema)
        for name in INDEX_TABLES
    }


def _json_typed(con, table: str, schema: pa.Schema) -> pa.Schema:
    json_columns = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall() if row[1] == "JSON"}
    return pa.schema(
        [field.with_type(pa.json_(pa.string())) if field.name in json_columns else field for field in schema]
    )


def dumps(value: Any) -> bytes | None:
    """JSON text of a decoded value, however deep (UTF-8 bytes as orjson writes them, which Arrow takes
    as they are); integers beyond 64 bits are kept exactly."""
    return None if value is None else compact_json(value)


HUGE_VALUE = 4 * 2**20
"""A value this large becomes an Arrow column without being copied (a 300 MB record or file Part would
otherwise be in memory twice)."""


def _column(values: list, type: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """`values` as an Arrow column of `type`; huge bytes values are wrapped, not copied."""
    if not any(isinstance(value, bytes) and len(value) >= HUGE_VALUE for value in values):
        return pa.array(values, type)
    chunks, run = [], []
    for value in values:
        if isinstance(value, bytes) and len(value) >= HUGE_VALUE:
            if run:
                chunks.append(pa.array(run, type))
                run = []
            chunks.append(_wrapped(value, type))
        else:
            run.append(value)
    if run:
        chunks.append(pa.array(run, type))
    return pa.chunked_array(chunks, type)


def _wrapped(value: bytes, type: pa.DataType) -> pa.Array:
    storage = type.storage_type if isinstance(type, pa.ExtensionType) else type
    offsets = pa.array(
        [0, len(value)],
        pa.int64() if pa.types.is_large_binary(storage) or pa.types.is_large_string(storage) else pa.int32(),
    )
    array = pa.Array.from_buffers(storage, 1, [None, offsets.buffers()[1], pa.py_buffer(value)])
    return pa.ExtensionArray.from_storage(type, array) if storage is not type else array


def _array(value: Any) -> list:
    """A card field that should be an array, as a list; anything else (a hostile card) as empty."""
    return list(value) if isinstance(value, list) else []


def _id(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else dumps(value)


ROW_COLUMNS = {
    "records": ("record_id", "seq", "locator", "line", "byte_offset", "kind", "sha256", "raw", "status", "reason"),
    "results": (
        "copy_id",
        "result_key",
        "kind",
        "task_id",
        "context_id",
        "message_id",
        "state",
        "terminal",
        "timestamp",
        "locator",
        "record_ids",
        "claims",
        "origin",
    ),
    "parts": (
        "part_id",
        "copy_id",
        "result_key",
        "role",
        "location",
        "artifact_id",
        "artifact_name",
        "message_id",
        "part_index",
        "ordinal",
        "kind",
        "media_type",
        "content_hash",
        "text",
        "data",
        "file",
        "metadata",
        "is_citation",
    ),
    "citations": (
        "part_id",
        "copy_id",
        "result_key",
        "citation_hash",
        *CONTENT_FIELDS,
        "valid",
        "problems",
        "inferred",
    ),
    "agent_cards": ("card_id", "record_id", "name", "url", "declares_extension", "lists_media_type", "card"),
    "rpc_errors": ("record_id", "rpc_id", "code", "message"),
}
"""The columns of each table's row tuples, in order; the file's constant columns (source_path, source_dir,
source_sha256, ingested_at) are added once per batch."""

_citation_content = attrgetter(*CONTENT_FIELDS)
"""What a `Citation` says, in the order of `CONTENT_FIELDS`."""

CLAIM_PART_COLUMNS = ("part_id", "copy_id", "result_key", "content_hash")
"""A claim's columns that are its Part's: sent once per Part, as the dictionary of an Arrow dictionary column."""

BATCH_BYTES = 16 * 2**20
BATCH_ROWS = 20_000
"""Rows held before they become Arrow batches in the spool: about this many bytes of raw records and
Part contents, or this many rows. One record or one result larger than this is one batch of its own."""


class FileRows:
    """Row tuples per table for one source file, ready to become Arrow batches.

    With a `spool`, every `BATCH_BYTES` or `BATCH_ROWS` of rows are handed to it as Arrow batches
    (typed by `schemas`) and let go: the rows of a file are never all in memory at once.

    Without a `version`, the rows of several small files, each taken whole from its own FileRows by
    `absorb`: they become Arrow batches together (a batch per table and file cost more than the file's
    reading and understanding), each row naming its file."""

    def __init__(
        self,
        version: SourceVersion | None,
        ingested_at: datetime | None,
        spool: Spool | None = None,
        schemas: dict[str, pa.Schema] | None = None,
        origin: str | None = None,
    ) -> None:
        self.origin = origin  # the spool directory, for a spool segment's copies: they are origin copies
        if version is not None:
            self.source_path, self.source_sha256, self.key = version.path, version.sha256, version.key
            self.source_dir = os.path.dirname(version.path)
        self.ingested_at = ingested_at
        self.spool, self.schemas = spool, schemas
        self._clear()

    def _clear(self) -> None:
        self.rows: dict[str, list[tuple]] = defaultdict(list)
        self.claims: dict[str, list] = {"pointer": [], "value": [], "literal": [], "part": []}
        self.claim_parts: list[tuple[str, str, str, str]] = []
        self.held_bytes = self.held_rows = 0
        self.huge = False  # whether a value held is HUGE_VALUE or larger
        self.files: list[tuple[str, str, str, datetime]] = []  # absorbed: path, folder, sha256, ingested_at
        self.owners: dict[str, list[tuple[int, int]]] = defaultdict(list)  # per table: (file, rows) in order

    def _held(self, size: int, rows: int = 1) -> None:
        """Count rows just added; past a batch's worth, hand them to the spool."""
        self.held_bytes += size
        self.held_rows += rows
        self.huge = self.huge or size >= HUGE_VALUE
        if self.spool is not None and (self.held_bytes >= BATCH_BYTES or self.held_rows >= BATCH_ROWS):
            self.hand_over()

    def hand_over(self) -> None:
        """Hand every row held to the spool as Arrow batches, and let them go."""
        for name, table in self.tables(self.schemas):
            self.spool.add(name, table)
        self._clear()

    def absorb(self, other: FileRows) -> None:
        """Take every row of one file's `other` (made without a spool), to be batched with the rows held."""
        file = len(self.files)  # of the files absorbed since the last hand-over
        self.files.append((other.source_path, other.source_dir, other.source_sha256, other.ingested_at))
        for name, rows in other.rows.items():
            if rows:
                self.rows[name] += rows
                self.owners[name].append((file, len(rows)))
        if other.claims["pointer"]:
            offset = len(self.claim_parts)
            for column, values in other.claims.items():
                self.claims[column] += [part + offset for part in values] if column == "part" else values
            self.claim_parts += other.claim_parts
            self.owners["claims"].append((file, len(other.claims["pointer"])))
        self.huge = self.huge or other.huge
        self._held(other.held_bytes, other.held_rows)

    def record_id(self, record: Record, sha256: str) -> str:
        return key_hash(self.key, record.locator, sha256)

    def add_record(self, record: Record, record_id: str, sha256: str, status: str, reason: str | None) -> None:
        if len(record.raw) >= BATCH_BYTES and self.held_rows and self.spool is not None:
            self.hand_over()  # a huge record travels in a batch of its own
        self.rows["records"].append(
            (
                record_id,
                record.seq,
                record.locator,
                record.line,
                record.byte_offset,
                record.kind,
                sha256,
                record.raw,
                status,
                reason,
            )
        )
        self._held(len(record.raw))

    def add_assembly(self, assembly: FileAssembly) -> None:
        """The rows of everything one file's records assembled into: stored copies, agent cards, errors."""
        for copy in assembly.copies():
            self.add_copy(copy)
        for record_id, card in assembly.cards:
            self.add_card(record_id, card)
        for record_id, error in assembly.errors:
            self.add_error(record_id, error)

    def add_copy(self, copy: StoredCopy) -> None:
        copy_id = key_hash(self.key, copy.key)
        claim_keys: set[tuple[str, str]] = set()
        ordinal_count = 0
        for ordinal_count, located in enumerate(copy.located_parts(), start=1):
            self._add_part(copy, copy_id, ordinal_count - 1, located, claim_keys)
        self.rows["results"].append(
            (
                copy_id,
                copy.key,
                copy.kind,
                copy.task_id,
                copy.context_id,
                copy.message_id,
                copy.state,
                copy.terminal,
                copy.timestamp,
                copy.locator,
                copy.record_ids,
                len(claim_keys),
                self.origin,
            )
        )
        self._held(0, 1 + ordinal_count + len(claim_keys))

    def _add_part(self, copy: StoredCopy, copy_id: str, ordinal: int, located, claim_keys: set) -> None:
        part: Part = located.part
        part_id = key_hash(copy_id, str(ordinal))
        citation, leaves = judged(part.kind, part.data, part.media_type, located.role)
        part_hash = content_hash({part.kind: _content(part)})
        artifact, message = located.artifact, located.message
        data, file = _stored_data(part), dumps(part.file)
        self.rows["parts"].append(
            (
                part_id,
                copy_id,
                copy.key,
                located.role,
                located.location,
                artifact.artifact_id if artifact else None,
                artifact.name if artifact else None,
                message.message_id if message else None,
                located.part_index,
                ordinal,
                part.kind,
                part.media_type,
                part_hash,
                part.text,
                data,
                file,
                dumps(part.metadata),
                citation is not None,
            )
        )
        self.held_bytes += len(part.text or "") + len(data or "") + len(file or "")
        self.huge = self.huge or max(len(data or ""), len(file or "")) >= HUGE_VALUE
        if citation is not None:
            self._add_citation(copy, copy_id, part_id, citation)
        elif leaves:
            claims = self.claims
            claims["part"] += [len(self.claim_parts)] * len(leaves)
            self.claim_parts.append((part_id, copy_id, copy.key, part_hash))
            pointers, values = zip(*leaves, strict=True)
            claims["pointer"] += pointers
            claims["value"] += [float(value) if -1e308 < value < 1e308 else None for value in values]
            claims["literal"] += map(str, values)  # an int's digits; a float's repr (str of a float is its repr)
            claim_keys.update(zip(repeat(part_hash), pointers))

    def _add_citation(self, copy: StoredCopy, copy_id: str, part_id: str, c: Citation) -> None:
        self.rows["citations"].append(
            (
                part_id,
                copy_id,
                copy.key,
                c.citation_hash,
                *_citation_content(c),
                c.valid,
                c.problems,
                c.inferred,
            )
        )

    def add_card(self, record_id: str, card: dict) -> None:
        capabilities = card.get("capabilities")
        extensions = _array(capabilities.get("extensions") if isinstance(capabilities, dict) else None)
        modes = _array(card.get("defaultOutputModes") or card.get("default_output_modes"))
        for skill in _array(card.get("skills")):
            if isinstance(skill, dict):
                modes += _array(skill.get("outputModes") or skill.get("output_modes"))
        interfaces = _array(card.get("supportedInterfaces") or card.get("supported_interfaces"))
        first = interfaces[0] if interfaces and isinstance(interfaces[0], dict) else {}
        self.rows["agent_cards"].append(
            (
                key_hash(self.key, record_id),
                record_id,
                _id(card.get("name")),
                _id(card.get("url") or first.get("url")),
                any(isinstance(e, dict) and e.get("uri") == EXTENSION_URI for e in extensions),
                MEDIA_TYPE in modes,
                dumps(card),
            )
        )

    def add_error(self, record_id: str, error: ErrorResponse) -> None:
        self.rows["rpc_errors"].append((record_id, _id(error.rpc_id), _id(error.code), error.message))

    def tables(self, schemas: dict[str, pa.Schema]) -> Iterator[tuple[str, pa.Table]]:
        """(table name, Arrow batch) for every table this file has rows for, typed by `schemas`."""
        for name in INDEX_TABLES:
            if name == "claims":
                if self.claims["pointer"]:
                    yield name, self._claims_table(schemas[name])
            elif self.rows.get(name):
                columns = dict(zip(ROW_COLUMNS[name], zip(*self.rows[name], strict=False), strict=False))
                yield name, self._table(schemas[name], columns, len(self.rows[name]), self.owners.get(name))

    def _claims_table(self, schema: pa.Schema) -> pa.Table:
        parts = pa.array(self.claims["part"], pa.int32())
        columns: dict[str, Any] = {
            "pointer": self.claims["pointer"],
            "value": self.claims["value"],
            "literal": self.claims["literal"],
        }
        for name, values in zip(CLAIM_PART_COLUMNS, zip(*self.claim_parts, strict=False), strict=False):
            columns[name] = pa.DictionaryArray.from_arrays(parts, pa.array(values, pa.string()))
        return self._table(schema, columns, len(parts), self.owners.get("claims"))

    def _table(
        self, schema: pa.Schema, columns: dict[str, Any], length: int, owners: list[tuple[int, int]] | None
    ) -> pa.Table:
        """An Arrow batch of `schema`'s columns: the given ones, plus the constant columns of the file, or of
        each row's file (`owners`: how many rows in turn are of which file absorbed)."""
        if owners:
            files = pa.array(list(chain.from_iterable(repeat(file, rows) for file, rows in owners)), pa.int32())
            paths, folders, sha256s, moments = zip(*self.files, strict=True)
        else:
            files = pa.repeat(pa.scalar(0, pa.int32()), length)
            paths, folders, sha256s, moments = (self.source_path,), (self.source_dir,), (self.source_sha256,), None
        constants = {"source_path": paths, "source_dir": folders, "source_sha256": sha256s}
        arrays, fields = [], []
        for field in schema:
            values = columns.get(field.name)
            if field.name in constants:
                values = pa.DictionaryArray.from_arrays(files, pa.array(constants[field.name], pa.string()))
            elif field.name == "ingested_at":
                if moments:
                    values = pa.array(moments, field.type).take(files)
                else:
                    values = pa.repeat(pa.scalar(self.ingested_at, field.type), length)
            elif not isinstance(values, pa.Array):
                values = _column(values, field.type) if self.huge else pa.array(values, field.type)
            arrays.append(values)
            fields.append(field.with_type(values.type))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _content(part: Part) -> Any:
    """What a Part says, for its identity: text, data, the file's location or bytes (not its name), or
    an undecoded Part's whole object."""
    kind = part.kind
    if kind == "text":
        return part.text
    if kind == "data":
        return part.data
    if kind == "unknown":
        return part.raw
    if kind == "file" and isinstance(part.file, dict):
        return {key: value for key, value in part.file.items() if key != "name"}
    return part.file


def _stored_data(part: Part) -> bytes | None:
    """The `data` column: a data Part's data, or an undecoded Part's whole object (kind unknown)."""
    kind = part.kind
    return dumps(part.data if kind == "data" else part.raw if kind == "unknown" else None)
