"""The compiled core's boundary, typed (`archiver/core/src/python/`): what crosses it and as what.

`tests/test_core_boundary.py` holds this file to the extension: the same names, and each function's and
method's parameters as the core declares them.
"""

from collections.abc import Iterator, Sequence
from typing import Any, TypedDict, final, type_check_only

__all__ = [
    "INDEX_TABLES",
    "RECORD_YIELDS",
    "ArrowBatch",
    "FileIndex",
    "LiveAssembly",
    "claim_rows",
    "docs",
    "index_files",
    "migrations",
    "stated_number",
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
