"""The rows one source file contributes to each table of the index."""
from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from datetime import datetime
from typing import Any

import orjson

from ..cite.canonical import content_hash, key_hash
from ..cite.citations import EXTENSION_URI, MEDIA_TYPE, Citation, citation_of
from ..cite.claims import numeric_leaves
from ..read.records import Record
from ..store import models
from ..understand.assemble import StoredCopy
from ..understand.model import ErrorResponse, Part
from .arrow import table_of


def dumps(value: Any) -> str | None:
    """JSON text of a decoded value; integers beyond 64 bits are kept exactly."""
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False)


def _id(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else dumps(value)


class FileRows:
    """Column lists per table for one source file, ready to become Arrow batches."""

    def __init__(self, source_path: str, source_sha256: str, ingested_at: datetime) -> None:
        self.source_path = source_path
        self.source_sha256 = source_sha256
        self.source_dir = os.path.dirname(source_path)
        self.ingested_at = ingested_at
        self.columns: dict[type, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        self.locators: dict[str, str] = {}
        self.counts: dict[str, int] = defaultdict(int)

    def _add(self, model: type, **row: Any) -> None:
        table = self.columns[model]
        for name, value in row.items():
            table[name].append(value)
        self.counts[model.__tablename__] += 1

    def record_id(self, record: Record) -> str:
        return key_hash(self.source_path, record.locator, hashlib.sha256(record.raw).hexdigest())

    def add_record(self, record: Record, record_id: str, status: str, reason: str | None) -> None:
        self.locators[record_id] = record.locator
        self._add(
            models.RawRecord, record_id=record_id, source_path=self.source_path, seq=record.seq,
            locator=record.locator, line=record.line, byte_offset=record.byte_offset, kind=record.kind,
            sha256=hashlib.sha256(record.raw).hexdigest(), raw=record.raw, status=status, reason=reason,
            ingested_at=self.ingested_at,
        )

    def add_copy(self, copy: StoredCopy) -> None:
        copy_id = key_hash(self.source_path, copy.key)
        self._add(
            models.StoredCopy, copy_id=copy_id, result_key=copy.key, kind=copy.kind, task_id=copy.task_id,
            context_id=copy.context_id, message_id=copy.message_id, state=copy.state, terminal=copy.terminal,
            timestamp=copy.timestamp, source_path=self.source_path, source_dir=self.source_dir,
            locator=self.locators.get(copy.record_ids[0]) if copy.record_ids else None,
            record_ids=copy.record_ids,
        )
        for ordinal, located in enumerate(copy.located_parts()):
            self._add_part(copy, copy_id, ordinal, located)

    def _add_part(self, copy: StoredCopy, copy_id: str, ordinal: int, located) -> None:
        part: Part = located.part
        part_id = key_hash(copy_id, str(ordinal))
        is_result = located.role == "agent"
        citation = citation_of(part.data, part.media_type) if part.kind == "data" and is_result else None
        self._add(
            models.IndexedPart, part_id=part_id, copy_id=copy_id, result_key=copy.key,
            source_path=self.source_path, role=located.role, location=located.location,
            artifact_id=located.artifact.artifact_id if located.artifact else None,
            artifact_name=located.artifact.name if located.artifact else None,
            message_id=located.message.message_id if located.message else None,
            part_index=located.part_index, ordinal=ordinal, kind=part.kind, media_type=part.media_type,
            content_hash=content_hash({part.kind: _content(part)}), text=part.text,
            data=dumps(part.data) if part.kind == "data" else None, file=dumps(part.file),
            metadata=dumps(part.metadata), is_citation=citation is not None,
        )
        if citation is not None:
            self._add_citation(copy, copy_id, part_id, citation)
        elif part.kind == "data" and is_result:
            for pointer, value in numeric_leaves(part.data):
                self._add(
                    models.Claim, part_id=part_id, pointer=pointer, copy_id=copy_id, result_key=copy.key,
                    source_path=self.source_path, value=float(value) if abs(value) < 1e308 else None,
                    literal=repr(value) if isinstance(value, float) else str(value),
                )

    def _add_citation(self, copy: StoredCopy, copy_id: str, part_id: str, c: Citation) -> None:
        self._add(
            models.Citation, part_id=part_id, copy_id=copy_id, result_key=copy.key,
            source_path=self.source_path, citation_hash=c.citation_hash, study=c.study, period=c.period,
            fielded=c.fielded, fielded_start=c.fielded_start, fielded_end=c.fielded_end,
            base_name=c.base_name, base_n=c.base_n, weight=c.weight, source_table=c.source_table,
            source_column=c.source_column, source_function=c.source_function, warnings=c.warnings,
            extra=c.extra, valid=c.valid, problems=c.problems, inferred=c.inferred,
        )

    def add_card(self, record_id: str, card: dict) -> None:
        extensions = (card.get("capabilities") or {}).get("extensions") or []
        modes = list(card.get("defaultOutputModes") or card.get("default_output_modes") or [])
        for skill in card.get("skills") or []:
            if isinstance(skill, dict):
                modes += skill.get("outputModes") or skill.get("output_modes") or []
        interfaces = card.get("supportedInterfaces") or card.get("supported_interfaces") or [{}]
        self._add(
            models.AgentCard, card_id=key_hash(self.source_path, record_id), source_path=self.source_path,
            source_dir=self.source_dir, record_id=record_id, name=_id(card.get("name")),
            url=_id(card.get("url") or (interfaces[0] or {}).get("url")),
            declares_extension=any(isinstance(e, dict) and e.get("uri") == EXTENSION_URI for e in extensions),
            lists_media_type=MEDIA_TYPE in modes, card=dumps(card),
        )

    def add_error(self, record_id: str, error: ErrorResponse) -> None:
        self._add(
            models.RpcError, record_id=record_id, source_path=self.source_path, rpc_id=_id(error.rpc_id),
            code=_id(error.code), message=error.message,
        )

    def tables(self):
        """(model, Arrow table) for every table this file has rows for."""
        for model in models.BULK_TABLES:
            if model in self.columns:
                yield model, table_of(model, self.columns[model])


def _content(part: Part) -> Any:
    return {"text": part.text, "data": part.data}.get(part.kind, part.file)
