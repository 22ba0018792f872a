"""The rows one source file contributes to each table of the index."""
from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa

from ..cite.canonical import content_hash, key_hash
from ..cite.citations import EXTENSION_URI, MEDIA_TYPE, Citation, citation_of
from ..cite.claims import numeric_leaves
from ..read.records import Record
from ..understand.assemble import StoredCopy
from ..understand.model import ErrorResponse, Part

INDEX_TABLES = ("records", "results", "parts", "citations", "claims", "agent_cards", "rpc_errors")
"""The tables ingest writes, raw records first."""


def arrow_schemas(con) -> dict[str, pa.Schema]:
    """Arrow schemas of the index tables as the migrated archive declares them."""
    return {name: con.execute(f"SELECT * FROM {name} LIMIT 0").arrow().schema for name in INDEX_TABLES}


def dumps(value: Any) -> str | None:
    """JSON text of a decoded value; integers beyond 64 bits are kept exactly."""
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False)


def _array(value: Any) -> list:
    """A card field that should be an array, as a list; anything else (a hostile card) as empty."""
    return list(value) if isinstance(value, list) else []


def _id(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else dumps(value)


class FileRows:
    """Column lists per table for one source file, ready to become Arrow batches."""

    def __init__(self, source_path: str, source_sha256: str, ingested_at: datetime) -> None:
        self.source_path = source_path
        self.source_sha256 = source_sha256
        self.source_dir = os.path.dirname(source_path)
        self.ingested_at = ingested_at
        self.rows: dict[str, list[dict]] = defaultdict(list)
        self.claims: dict[str, list] = defaultdict(list)  # the bulkiest table, kept as columns
        self.locators: dict[str, str] = {}

    def _add(self, table: str, **row: Any) -> None:
        self.rows[table].append(row)

    def record_id(self, record: Record) -> str:
        return key_hash(self.source_path, record.locator, hashlib.sha256(record.raw).hexdigest())

    def add_record(self, record: Record, record_id: str, status: str, reason: str | None) -> None:
        self.locators[record_id] = record.locator
        self._add(
            "records", record_id=record_id, source_path=self.source_path, seq=record.seq,
            locator=record.locator, line=record.line, byte_offset=record.byte_offset, kind=record.kind,
            sha256=hashlib.sha256(record.raw).hexdigest(), raw=record.raw, status=status, reason=reason,
            ingested_at=self.ingested_at,
        )

    def add_copy(self, copy: StoredCopy) -> None:
        copy_id = key_hash(self.source_path, copy.key)
        result = dict(
            copy_id=copy_id, result_key=copy.key, kind=copy.kind, task_id=copy.task_id,
            context_id=copy.context_id, message_id=copy.message_id, state=copy.state, terminal=copy.terminal,
            timestamp=copy.timestamp, source_path=self.source_path, source_dir=self.source_dir,
            locator=self.locators.get(copy.record_ids[0]) if copy.record_ids else None,
            record_ids=copy.record_ids,
        )
        self.rows["results"].append(result)
        claim_keys: set[tuple[str, str]] = set()
        for ordinal, located in enumerate(copy.located_parts()):
            self._add_part(copy, copy_id, ordinal, located, claim_keys)
        result["claims"] = len(claim_keys)

    def _add_part(self, copy: StoredCopy, copy_id: str, ordinal: int, located, claim_keys: set) -> None:
        part: Part = located.part
        part_id = key_hash(copy_id, str(ordinal))
        is_result = located.role == "agent"
        citation = citation_of(part.data, part.media_type) if part.kind == "data" and is_result else None
        part_hash = content_hash({part.kind: _content(part)})
        self._add(
            "parts", part_id=part_id, copy_id=copy_id, result_key=copy.key,
            source_path=self.source_path, role=located.role, location=located.location,
            artifact_id=located.artifact.artifact_id if located.artifact else None,
            artifact_name=located.artifact.name if located.artifact else None,
            message_id=located.message.message_id if located.message else None,
            part_index=located.part_index, ordinal=ordinal, kind=part.kind, media_type=part.media_type,
            content_hash=part_hash, text=part.text,
            data=dumps(part.data) if part.kind == "data" else None, file=dumps(part.file),
            metadata=dumps(part.metadata), is_citation=citation is not None,
        )
        if citation is not None:
            self._add_citation(copy, copy_id, part_id, citation)
        elif part.kind == "data" and is_result:
            leaves = numeric_leaves(part.data)
            claims = self.claims
            claims["part_id"] += [part_id] * len(leaves)
            claims["copy_id"] += [copy_id] * len(leaves)
            claims["result_key"] += [copy.key] * len(leaves)
            claims["content_hash"] += [part_hash] * len(leaves)
            for pointer, value in leaves:
                claims["pointer"].append(pointer)
                claims["value"].append(float(value) if -1e308 < value < 1e308 else None)
                claims["literal"].append(repr(value) if type(value) is float else str(value))
                claim_keys.add((part_hash, pointer))

    def _add_citation(self, copy: StoredCopy, copy_id: str, part_id: str, c: Citation) -> None:
        self._add(
            "citations", part_id=part_id, copy_id=copy_id, result_key=copy.key,
            source_path=self.source_path, citation_hash=c.citation_hash, study=c.study, period=c.period,
            fielded=c.fielded, fielded_start=c.fielded_start, fielded_end=c.fielded_end,
            base_name=c.base_name, base_n=c.base_n, weight=c.weight, source_table=c.source_table,
            source_column=c.source_column, source_function=c.source_function, warnings=c.warnings,
            extra=c.extra, valid=c.valid, problems=c.problems, inferred=c.inferred,
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
        self._add(
            "agent_cards", card_id=key_hash(self.source_path, record_id), source_path=self.source_path,
            source_dir=self.source_dir, record_id=record_id, name=_id(card.get("name")),
            url=_id(card.get("url") or first.get("url")),
            declares_extension=any(isinstance(e, dict) and e.get("uri") == EXTENSION_URI for e in extensions),
            lists_media_type=MEDIA_TYPE in modes, card=dumps(card),
        )

    def add_error(self, record_id: str, error: ErrorResponse) -> None:
        self._add(
            "rpc_errors", record_id=record_id, source_path=self.source_path, rpc_id=_id(error.rpc_id),
            code=_id(error.code), message=error.message,
        )

    def tables(self, schemas: dict[str, pa.Schema]) -> Iterator[tuple[str, pa.Table]]:
        """(table name, Arrow batch) for every table this file has rows for, typed by `schemas`."""
        for name in INDEX_TABLES:
            if name == "claims" and self.claims:
                columns = {**self.claims, "source_path": [self.source_path] * len(self.claims["pointer"])}
                yield name, pa.Table.from_pydict(columns, schema=schemas[name])
            elif self.rows.get(name):
                yield name, pa.Table.from_pylist(self.rows[name], schema=schemas[name])


def _content(part: Part) -> Any:
    """What a Part says, for its identity: text, data, or the file's location or bytes (not its name)."""
    if part.kind == "file" and isinstance(part.file, dict):
        return {key: value for key, value in part.file.items() if key != "name"}
    return {"text": part.text, "data": part.data}.get(part.kind, part.file)
