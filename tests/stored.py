"""What the archive stores, read back whole for tests: `records` with each raw record's bytes, those stored in
chunks (`value_chunks`) assembled."""

from __future__ import annotations

from archiver.store.chunks import wholes_sql

WHOLE_RECORDS = f"""(
    SELECT r.* REPLACE (coalesce(r.raw, w.value) AS raw)
    FROM records r LEFT JOIN {wholes_sql("SELECT raw_chunked FROM records")} w ON w.value_sha256 = r.raw_chunked)"""
"""A relation to read instead of `records` (`FROM {WHOLE_RECORDS} AS records`): for a test's small archive."""
