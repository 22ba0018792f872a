"""Raw records out exactly as ingested: a JSON Lines stream, or the source files re-created.

A source's records cover its (decompressed) bytes contiguously, blank lines and
keep-alive comments included as `filler` records, so concatenating them in `seq`
order gives the file back. A lineage of versions (a log that grew) comes back as
its latest version: the latest record at each position of the lineage. A path
rewritten with other bytes holds several lineages: each comes back whole, the
latest at the path, earlier ones beside it as `name@<first 12 hex of the
lineage>.ext`.
"""

from __future__ import annotations

import base64
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import orjson

from ..query.selection import Selection
from ..read.containers import on_disk
from ..store import chunks, views

_LATEST = """
    SELECT r.*, v.lineage FROM records r JOIN sources v ON v.path = r.source_path AND v.sha256 = r.source_sha256
    QUALIFY row_number() OVER (PARTITION BY r.source_path, v.lineage, r.seq
                               ORDER BY r.ingested_at DESC, r.record_id) = 1
"""


def selected_records(selection: Selection) -> tuple[str, list]:
    """SQL (and parameters) of the latest records of the selected files (`source`), narrowed by the other
    filters to the records of the results they match."""
    conditions, params = [], []
    chosen = selection.without_source()
    if chosen != Selection():
        where, params = chosen.where("u.")
        conditions.append(f"""record_id IN (
            SELECT unnest(r.record_ids) FROM results r
            WHERE r.copy_id IN (SELECT u.copy_id FROM citation_uses u WHERE {where}))""")
    if selection.source is not None:
        where, source_params = Selection(source=selection.source).where("x.", scope="copy")
        conditions.append(where)
        params += source_params
    return f"SELECT * FROM ({_LATEST}) x WHERE {' AND '.join(conditions) or 'TRUE'}", params


def empty_versions(selection: Selection) -> tuple[str, list]:
    """SQL (and parameters) of the (source_path, lineage) of the selected file versions that hold no record
    (an empty file); none when filters other than `source` narrow the export to results."""
    if selection.without_source() != Selection():
        return "SELECT NULL AS source_path, NULL AS lineage WHERE FALSE", []
    where, params = Selection(source=selection.source).where("x.", scope="copy")
    return (
        f"""SELECT x.source_path, x.lineage FROM (
                SELECT s.path AS source_path, s.sha256 AS source_sha256, s.lineage FROM sources s
                WHERE s.alias_of IS NULL AND NOT EXISTS (
                    SELECT 1 FROM records r WHERE r.source_path = s.path AND r.source_sha256 = s.sha256)) x
            WHERE {where}""",
        params,
    )


def jsonl(con: duckdb.DuckDBPyConnection, sql: str, params: list, out, batch_size: int = 1024) -> int:
    """One JSON object per record, in ingest order; `raw` holds its bytes as text (`raw_base64` when
    they are not UTF-8)."""
    cursor = views.cursor(con).execute(
        f"SELECT source_path, source_sha256, seq, locator, kind, status, reason, sha256, raw, raw_chunked FROM ({sql}) "
        "ORDER BY ingested_at, source_path, lineage, seq",
        params,
    )
    count = 0
    while batch := cursor.fetchmany(batch_size):
        for source_path, source_sha256, seq, locator, kind, status, reason, sha256, raw, raw_chunked in batch:
            entry = {
                "source_path": source_path,
                "source_sha256": source_sha256,
                "seq": seq,
                "locator": locator,
                "kind": kind,
                "status": status,
                "reason": reason,
                "sha256": sha256,
            }
            raw = bytes(chunks.whole(con, raw, raw_chunked) or b"")
            try:
                entry["raw"] = raw.decode("utf-8")
            except UnicodeDecodeError:
                entry["raw_base64"] = base64.b64encode(raw).decode()
            out.write(orjson.dumps(entry) + b"\n")
            count += 1
    return count


@dataclass
class ExportedFile:
    source_path: str
    path: str
    records: int


def recreate(
    con: duckdb.DuckDBPyConnection, sql: str, params: list, directory: str, empty: tuple[str, list]
) -> list[ExportedFile]:
    """Re-create each selected source under `directory`, at its path relative to the sources' common
    directory, under the name's bytes as found (`on_disk`), the versions of `empty` (`empty_versions`) as
    empty files. Gzip sources come back decompressed (".gz" dropped); SQLite task stores as SQLite
    files whose rows read back identically."""
    empty_sql, empty_params = empty
    lineages = con.execute(
        f"""
        SELECT l.source_path, l.lineage, v.compression, v.container,
               l.lineage = last(l.lineage) OVER (PARTITION BY l.source_path ORDER BY v.first_at
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS latest
        FROM (SELECT DISTINCT source_path, lineage FROM ({sql}) UNION {empty_sql}) l
        JOIN (SELECT path, lineage, arg_max(compression, ingested_at) AS compression,
                     arg_max(container, ingested_at) AS container, min(ingested_at) AS first_at
              FROM sources WHERE alias_of IS NULL GROUP BY path, lineage) v
          ON v.path = l.source_path AND v.lineage = l.lineage
        ORDER BY l.source_path, v.first_at""",
        [*params, *empty_params],
    ).fetchall()
    root = _common_dir([on_disk(path) for path, *_ in lineages])
    made = []
    reader = views.cursor(con)
    for path, lineage, compression, container, latest in lineages:
        records = reader.execute(
            f"SELECT seq, locator, kind, raw, raw_chunked, byte_offset FROM ({sql}) "
            "WHERE source_path = ? AND lineage = ? ORDER BY seq",
            [*params, path, lineage],
        )
        target = Path(directory, _relative(on_disk(path), root))
        whole_file = compression == "gzip" and container == "unreadable"
        if compression == "gzip" and not whole_file and target.suffix == ".gz":
            target = target.with_suffix("")
        if not latest:
            target = target.with_name(f"{target.stem}@{lineage[:12]}{target.suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        count = (_write_sqlite if container == "sqlite" else _write_bytes)(con, records, target)
        made.append(ExportedFile(path, str(target), count))
    return made


def _write_bytes(con: duckdb.DuckDBPyConnection, cursor, target: Path) -> int:
    """The records' bytes in order, a record stored in chunks written chunk by chunk. Filler whose bytes
    were written already is passed over: a lineage stored before runs of blank lines were one record holds
    a record a line, and a later version's run covers them."""
    count = written = 0
    with open(target, "wb") as handle:
        while batch := cursor.fetchmany(1024):
            for _seq, _locator, kind, raw, raw_chunked, offset in batch:
                if kind == "filler" and offset is not None and offset < written:
                    continue
                written = max(written, (offset or 0) + len(raw or b""))
                if raw_chunked is None:
                    handle.write(bytes(raw or b""))
                else:
                    for piece in chunks.pieces(con, raw_chunked):
                        handle.write(piece)
                count += 1
    return count


def _write_sqlite(con: duckdb.DuckDBPyConnection, cursor, target: Path) -> int:
    rows = [
        (locator, kind, bytes(chunks.whole(con, raw, raw_chunked) or b""))
        for _seq, locator, kind, raw, raw_chunked, _offset in cursor.fetchall()
    ]
    if any(" rowid " not in locator for locator, _kind, _raw in rows):  # no task store: bytes as they were
        target.write_bytes(b"".join(raw for _locator, _kind, raw in rows))
        return len(rows)
    target.unlink(missing_ok=True)
    db = sqlite3.connect(target)
    try:
        made: set[str] = set()
        for locator, _kind, raw in rows:
            table, _, rowid = locator.rpartition(" rowid ")
            row = orjson.loads(raw)
            quoted = '"' + table.replace('"', '""') + '"'
            columns = ", ".join('"' + name.replace('"', '""') + '"' for name in row)
            if table not in made:
                db.execute(f"CREATE TABLE {quoted} ({columns})")
                made.add(table)
            marks = ", ".join("?" * (len(row) + 1))
            db.execute(f"INSERT INTO {quoted} (rowid, {columns}) VALUES ({marks})", [int(rowid), *row.values()])
        db.commit()
    finally:
        db.close()
    return len(rows)


def _common_dir(paths: list[str]) -> str:
    files = [p for p in paths if os.path.isabs(p)]
    if not files:
        return ""
    return os.path.commonpath([os.path.dirname(p) for p in files])


def _relative(path: str, root: str) -> str:
    if not os.path.isabs(path):
        return "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in path) or "source"
    return os.path.relpath(path, root) if root else path.lstrip("/")


def raw_entries(lines: Iterator[bytes]) -> Iterator[dict]:
    """Decode a raw JSON Lines export back into entries with `raw` as bytes (for tools and tests)."""
    for line in lines:
        entry = orjson.loads(line)
        entry["raw"] = (
            base64.b64decode(entry.pop("raw_base64")) if "raw_base64" in entry else entry["raw"].encode("utf-8")
        )
        yield entry
