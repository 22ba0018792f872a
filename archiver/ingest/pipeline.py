"""Preparing files ahead of the writer: small files in chunks, parsed in worker threads a bounded window
ahead, in input order (`prepared`)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator

from ..prepare import PreparedFile, prepare
from ..workers import Gauge, worker_pool

POOL_MIN_BYTES = 4 * 2**20
"""Below this much input, preparing in threads beside the writer saves nothing."""


WINDOW_BYTES = 8 * 2**20
"""Input the workers may prepare ahead of the writer (at least two files each): enough to keep them busy
while the writer commits a group, little enough that waiting results stay small."""


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


CHUNK_BYTES = 512 * 2**10
CHUNK_FILES = 256
"""Consecutive small files are prepared together, up to this many bytes or files: one call of a worker, one
Arrow batch per table for all of them (per file, the calls and the batches cost more than the reading)."""


def chunks(work: list[tuple], admit: Callable[[tuple], bool]) -> Iterator[list[tuple]]:
    """The admitted files of `work` in input order, in chunks to prepare together: consecutive small files
    that extend no stored version, each other file alone."""
    chunk, size = [], 0
    for item in work:
        if not admit(item):
            continue
        version = item[1]
        if version.size >= CHUNK_BYTES or version.extends_here:
            if chunk:
                yield chunk
                chunk, size = [], 0
            yield [item]
            continue
        chunk.append(item)
        size += version.size
        if size >= CHUNK_BYTES or len(chunk) >= CHUNK_FILES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def prepared(
    work: list[tuple], schemas: dict, workers: int, admit: Callable[[tuple], bool], gauge: Gauge
) -> Iterator[list[PreparedFile]]:
    """Prepared files in input order, a chunk at a time; parsing runs in `workers` threads, a bounded
    window ahead, each telling `gauge` how far it has read. `admit` is asked just before a file is prepared
    (it leases the file on a lake of many writers)."""
    grouped = chunks(work, admit)
    if workers <= 1 or len(work) < 2 or sum(version.size for _, version in work) < POOL_MIN_BYTES:
        with gauge.here():
            for chunk in grouped:
                ready = prepare(chunk, schemas)
                gauge.taken(0)
                yield ready
        return
    with worker_pool(workers, gauge) as pool:
        window: deque = deque()
        ahead = 0
        for chunk in grouped:
            size = sum(version.size for _, version in chunk)
            window.append((pool.submit(prepare, chunk, schemas), size))
            ahead += size
            while len(window) > workers * 2 and ahead > WINDOW_BYTES:
                future, size = window.popleft()
                ahead -= size
                yield future.result()
        while window:
            yield window.popleft()[0].result()
