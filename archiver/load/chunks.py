"""Values too large for their cells, split into `value_chunks` as their batches are written.

DuckDB keeps a value of about 64 kB and more pinned in memory until a checkpoint, so a few hundred MB of
them (inline file Parts: images, PDFs, CSV extracts) failed a commit at any memory limit. Before a batch
of a table with chunked columns (`CHUNKED_COLUMNS`) is inserted, each value past `CHUNK_BYTES` leaves its
cell (NULL) for chunks of `CHUNK_BYTES` in `value_chunks`, under its SHA-256, which the cell's
`<column>_chunked` names. A value stored already (by this batch, this transaction or an earlier one) is not
stored again. The chunks are slices of the batch's own buffers: splitting copies nothing.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..store.tables import CHUNK_BYTES, CHUNKED_COLUMNS, chunked

CHUNKS_SCHEMA = pa.schema([("value_sha256", pa.string()), ("seq", pa.int32()), ("chunk", pa.binary())])

BATCH_CHUNKS = 512
"""Chunks handed to DuckDB at a time (15 MiB)."""


class Split:
    """The values a table's batches moved out of their cells, chunk by chunk, each value once."""

    def __init__(self) -> None:
        self.values: dict[str, pa.Buffer] = {}

    def table(self, name: str, table: pa.Table) -> pa.Table:
        """`table` with each value of its chunked columns past `CHUNK_BYTES` moved out (NULL in its cell,
        its SHA-256 in `<column>_chunked`); the columns `<column>_chunked` are added whatever they hold."""
        for column in CHUNKED_COLUMNS.get(name, ()):
            index = table.schema.get_field_index(column)
            pieces, names = [], []
            for array in table.column(index).chunks:
                kept, hashes = self._array(array)
                pieces.append(kept)
                names.append(hashes)
            field = table.schema.field(index)
            table = table.set_column(index, field, pa.chunked_array(pieces, field.type))
            table = table.append_column(chunked(column), pa.chunked_array(names, pa.string()))
        return table

    def _array(self, array: pa.Array) -> tuple[pa.Array, pa.Array]:
        storage = array.storage if isinstance(array, pa.ExtensionArray) else array
        large = pc.fill_null(pc.greater(pc.binary_length(storage), CHUNK_BYTES), False)
        if not pc.any(large).as_py():
            return array, pa.nulls(len(array), pa.string())
        hashes: list[str | None] = [None] * len(array)
        for row in pc.indices_nonzero(large).to_pylist():
            value = _value_buffer(storage, row)
            digest = hashlib.sha256(value).hexdigest()
            hashes[row] = digest
            self.values.setdefault(digest, value)
        # every value but the large ones, taken: `if_else` with a null would copy the large ones' bytes too
        positions = pc.if_else(large, pa.scalar(None, pa.int64()), pa.array(range(len(storage)), pa.int64()))
        kept = storage.take(positions)
        if isinstance(array, pa.ExtensionArray):
            kept = pa.ExtensionArray.from_storage(array.type, kept)
        return kept, pa.array(hashes, pa.string())

    def chunks(self, leave_out: set[str]) -> Iterator[pa.Table]:
        """The chunks of every value moved out but those of `leave_out`, `BATCH_CHUNKS` a table at most."""
        arrays: list[tuple[pa.Array, pa.Array, pa.Array]] = []
        size, batch_bytes = 0, BATCH_CHUNKS * CHUNK_BYTES
        for digest, value in self.values.items():
            if digest in leave_out:
                continue
            for start in range(0, len(value), batch_bytes):
                piece = value.slice(start, min(batch_bytes, len(value) - start))
                arrays.append(_chunked_piece(digest, start // CHUNK_BYTES, piece))
                size += len(piece)
                if size >= batch_bytes:
                    yield _table(arrays)
                    arrays, size = [], 0
        if arrays:
            yield _table(arrays)


def _value_buffer(array: pa.Array, row: int) -> pa.Buffer:
    """Value `row` of a binary or string array, a slice of the array's own data buffer (`array[row]`, a
    scalar, copies it)."""
    _validity, offsets, data = array.buffers()
    wide = pa.types.is_large_binary(array.type) or pa.types.is_large_string(array.type)
    start, end = struct.unpack_from("<2q" if wide else "<2i", offsets, (array.offset + row) * (8 if wide else 4))
    return data.slice(start, end - start)


def _chunked_piece(digest: str, first: int, piece: pa.Buffer) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Chunks of `piece` (the part of a value starting at chunk `first`) as Arrow arrays over its buffer."""
    bounds = [*range(0, len(piece), CHUNK_BYTES), len(piece)]
    offsets = pa.array(bounds, pa.int32()).buffers()[1]
    count = len(bounds) - 1
    chunk = pa.Array.from_buffers(pa.binary(), count, [None, offsets, piece])
    return (
        pa.array([digest] * count, pa.string()),
        pa.array(range(first, first + count), pa.int32()),
        chunk,
    )


def _table(arrays: list[tuple[pa.Array, pa.Array, pa.Array]]) -> pa.Table:
    columns = [pa.chunked_array([parts[i] for parts in arrays], CHUNKS_SCHEMA.field(i).type) for i in range(3)]
    return pa.Table.from_arrays(columns, schema=CHUNKS_SCHEMA)
