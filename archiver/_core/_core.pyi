"""The compiled core's boundary, typed (`archiver/core/src/python/`): what crosses it and as what.

`tests/test_core_boundary.py` holds this file to the extension: the same names, and each function's and
method's parameters as the core declares them.
"""

from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any, TypedDict, final, type_check_only

__all__ = [
    "INDEX_TABLES",
    "RECORD_YIELDS",
    "ArrowBatch",
    "FileIndex",
    "LiveAssembly",
    "assemble_decoded",
    "canonical_json_of_value",
    "canonical_rewritten",
    "citation_of_value",
    "claim_rows",
    "compact_json_of_value",
    "decode_json",
    "docs",
    "events_of_value",
    "index_files",
    "key_hash_of",
    "migrations",
    "numeric_leaves_of_value",
    "part_of_value",
    "payload_events_of_value",
    "proto_json_of_value",
    "read_records_of",
    "recognise_value",
    "recogniser_names",
    "state_of_value",
    "stated_number",
    "timestamp_of_value",
]

INDEX_TABLES: list[str]
"""The tables ingest writes, in the order their batches come (`load/rows.rs`)."""

RECORD_YIELDS: list[str]
"""Every name `records.yields` holds (`understand/yields.rs`)."""

# The ingest's surface.

@type_check_only
class FileSpec(TypedDict, total=False):
    """One file `index_files` prepares: its source (`open`, `data`, `rows` with `container`, `unreadable` or
    `refused` with `container`), its archived `path`, its version `key`, `sha256` and `size`. A task store's
    row is (locator, JSON text, why it cannot be read or None)."""

    open: str | bytes
    data: bytes
    rows: Sequence[tuple[str, str | bytes, str | None]]
    container: str
    unreadable: str
    refused: str
    path: str
    key: str
    sha256: str
    size: int
    ingested_at_us: int

@type_check_only
class Outcome(TypedDict):
    """What preparing one file came to (`FileIndex.outcomes`)."""

    path: str
    container: str | None
    compression: str | None
    records: int
    quarantined: int
    recognised: int
    problems: list[str]

@final
class ArrowBatch:
    """One Arrow record batch, exported through the Arrow PyCapsule interface without a copy."""

    @property
    def num_rows(self) -> int: ...
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...

@final
class FileIndex:
    """The batches of a chunk of files as `(table name, batch)` pairs; `(None, None)` voids every pair before it."""

    def __iter__(self) -> Iterator[tuple[str, ArrowBatch] | tuple[None, None]]: ...
    def __next__(self) -> tuple[str, ArrowBatch] | tuple[None, None]: ...
    @property
    def bytes_read(self) -> int: ...
    @property
    def records_read(self) -> int: ...
    def outcomes(self) -> list[Outcome]: ...

def index_files(
    files: list[FileSpec],
    schemas: dict[str, object],
    ingested_at_us: int,
    record_limit: int,
    gzip_limit: int,
    gzip_ratio: int = ...,
    batch_bytes: int | None = None,
    batch_rows: int | None = None,
) -> FileIndex: ...

# The recording proxy's surface.

@final
class LiveAssembly:
    """One exchange's or one stream's results as the proxy saw them."""

    def __init__(self) -> None: ...
    def add(self, exchange: str, body: bytes) -> bool: ...
    def results(self) -> list[dict[str, Any]]: ...

# What is built in, and strings stating numbers.

def migrations() -> list[tuple[str, str]]: ...
def docs() -> list[tuple[str, str]]: ...
def stated_number(text: str) -> tuple[str, float, str | None] | None: ...
def claim_rows(data: str) -> list[tuple[str, float | None, str, str | None, str | None, str | None]]: ...

# Test surfaces: each stage's behaviour as the Python tests read it (`tests/core_model.py`).

def decode_json(payload: bytes) -> Any: ...
def key_hash_of(parts: list[str | None]) -> str: ...
def canonical_json_of_value(value: Any) -> bytes: ...
def compact_json_of_value(value: Any) -> bytes: ...
def canonical_rewritten(text: bytes) -> bool: ...
def read_records_of(
    path: bytes | None,
    data: bytes | None,
    name: str,
    record_limit: int,
    gzip_limit: int,
    line_chunk: int = ...,
    document_limit: int | None = None,
    gzip_ratio: int = ...,
) -> tuple[
    str,
    str | None,
    list[tuple[int, str, bytes, str, int | None, int | None, bytes | None, str | None, bytes | None]],
]: ...
def events_of_value(obj: Any) -> Any: ...
def payload_events_of_value(obj: Any) -> Any: ...
def timestamp_of_value(obj: Any) -> int | None: ...
def recogniser_names() -> list[str]: ...
def recognise_value(name: str, obj: Any) -> Any | None: ...
def part_of_value(obj: Any) -> Any: ...
def state_of_value(obj: Any) -> str | None: ...
def proto_json_of_value(obj: Any) -> Any | None: ...
def citation_of_value(data: Any, media_type: str | None = None) -> dict[str, date | str | bool | None] | None: ...
def numeric_leaves_of_value(data: Any) -> Any: ...
def assemble_decoded(records: list[Any], held_bytes: int = ..., kept_bytes: int = ...) -> Any: ...
