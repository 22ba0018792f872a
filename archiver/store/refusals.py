"""What is wrong with the archive file `--db` names, said in one line.

The file is looked at before DuckDB opens it, so that DuckDB never writes into what is not an archive
(nor reaches for an extension to read a SQLite file as a database); an archive DuckDB fails on is judged
by DuckDB's error: damaged, unwritable, a full disk, a missing folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ArchiveError

SQLITE_HEADER = b"SQLite format 3\x00"
DUCKDB_MAGIC = b"DUCK"
DUCKDB_MAGIC_OFFSET = 8
_FULL = re.compile(r"No space left on device|Disk quota exceeded|database or disk is full", re.IGNORECASE)
_UNWRITABLE = re.compile(r"Permission denied|Read-only file system|Operation not permitted", re.IGNORECASE)
_DAMAGED = re.compile(
    r"Could not read enough bytes|Corrupt database file|does not match stored checksum", re.IGNORECASE
)
_NO_FOLDER = re.compile(r"No such file or directory", re.IGNORECASE)
_OUT_OF_MEMORY = re.compile(r"failed to pin block|Out of Memory Error", re.IGNORECASE)
_PASS_DB = "pass --db an archive file, or a new path to create one"


class ArchiveUnusableError(ArchiveError):
    """The file `--db` names is not an archive, or an archive that cannot be used as it is."""


class ArchiveUnwritableError(ArchiveUnusableError):
    """The archive must be written to (to ingest, upgrade or recover it) and its file or folder refuses."""


class ArchiveDamagedError(ArchiveUnusableError):
    """The archive's tables are not the ones its schema version says (missing, retyped, replaced by a view, a
    table where its view should be), or it defines functions of its own (`store.trust`): nothing is run on it."""

    def __init__(self, message: str, found: list[str]) -> None:
        super().__init__(message)
        self.found = found
        """What is wrong, one line each."""


def refuse_damaged(where: str, found: list[str]) -> None:
    """Raise `ArchiveDamagedError` naming the first of `found` (what is wrong, one line each), if any."""
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ArchiveDamagedError(
            f"{where}: the archive is damaged: {found[0]}{more}; `archiver db check` lists what is wrong; "
            "restore it from a backup, or ingest its sources again into a new archive",
            found,
        )


class NoArchiveError(ArchiveError, FileNotFoundError):
    """A command that reads was pointed at a path where no archive is."""


def refuse_non_archive(path: str) -> None:
    """Raise `ArchiveUnusableError` when something exists at `path` that is not a DuckDB database file."""
    target = Path(path)
    if not target.exists():
        return
    if target.is_dir():
        raise ArchiveUnusableError(
            f"{path}: is a directory, not an archive; pass --db the archive's file "
            f"(e.g. {os.path.join(path, 'archive.duckdb')})"
        )
    if not target.is_file():
        raise ArchiveUnusableError(f"{path}: is not a regular file, so not an archive; {_PASS_DB}")
    try:
        with open(target, "rb") as handle:
            head = handle.read(max(len(SQLITE_HEADER), DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC)))
    except OSError as exc:
        raise ArchiveUnusableError(
            f"{path}: cannot be read ({exc.strerror}); fix its permissions, or {_PASS_DB}"
        ) from None
    if not head:
        raise ArchiveUnusableError(f"{path}: is an empty file, not an archive; remove it, or {_PASS_DB}")
    if head.startswith(SQLITE_HEADER):
        raise ArchiveUnusableError(
            f"{path}: is a SQLite database, not an archive; {_PASS_DB} (to ingest an A2A "
            f"task store: archiver ingest {path}; a lake with a SQLite catalog: "
            f"--db ducklake:sqlite:{path})"
        )
    if head[DUCKDB_MAGIC_OFFSET : DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC)] != DUCKDB_MAGIC:
        raise ArchiveUnusableError(
            f"{path}: is not a DuckDB archive (its first bytes are not a DuckDB file's); {_PASS_DB}"
        )


def storage_failure(exc: Exception) -> bool:
    """Whether `exc` is the disk refusing to store (full, read-only, not permitted): no retry cures that."""
    return bool(_FULL.search(str(exc)) or _UNWRITABLE.search(str(exc)))


def out_of_memory(exc: Exception) -> bool:
    """Whether `exc` is DuckDB's buffer pool refusing more memory: a retry meets the same limit."""
    return bool(_OUT_OF_MEMORY.search(str(exc)))


REFUSALS: tuple[tuple[re.Pattern, type[ArchiveError], str], ...] = (
    (
        _FULL,
        ArchiveUnusableError,
        "the disk is full ({reason}); free some space and run again "
        "(what was committed before stays; nothing of the failed commit was stored)",
    ),
    (
        _UNWRITABLE,
        ArchiveUnwritableError,
        "cannot write to the archive ({reason}); use a copy you may write to, or change its permissions",
    ),
    (
        _DAMAGED,
        ArchiveUnusableError,
        "the archive is damaged ({reason}); restore it from a backup, or ingest its sources again into a new archive",
    ),
    (
        _OUT_OF_MEMORY,
        ArchiveUnusableError,
        "the ingest's writer ran out of memory ({brief}); DuckDB keeps values of about 64 kB and more in memory, "
        "so many of them need more: run again with ARCHIVER_INGEST_MEMORY_MB set higher (what was committed "
        "before stays; nothing of the failed commit was stored)",
    ),
)
"""The known troubles of an archive file: what DuckDB says of each, the error it is, and the one line that
says it (`reason`: DuckDB's words on one line; `brief`: without its "Possible solutions")."""


READER_OUT_OF_MEMORY = (
    "the command ran out of the memory and disk it is held to ({brief}); nothing was changed: narrow it with "
    "filters, and please report it with the archive's size, for a question should fit whatever the archive holds"
)
"""What a command that writes no ingest says when DuckDB's buffer pool refuses it more (a question's query did not
fit its bound nor spill): not the ingest's advice of `REFUSALS`."""


def explain(exc: Exception, path: str, ingesting: bool = True) -> ArchiveUnusableError | None:
    """The one-line refusal for a DuckDB error on the archive file `path`, or None when it is none of
    the known troubles of a file; out of memory told as an ingest's, or when not `ingesting`, as any other
    command's (`READER_OUT_OF_MEMORY`)."""
    reason = " ".join(str(exc).split())
    for said, kind, line in REFUSALS:
        if said is _OUT_OF_MEMORY and not ingesting:
            line = READER_OUT_OF_MEMORY
        if said.search(reason):
            return kind(f"{path}: " + line.format(reason=reason, brief=reason.split(" Possible solutions")[0]))
    if _NO_FOLDER.search(reason) and not Path(path).parent.exists():
        return ArchiveUnusableError(f"{path}: its folder does not exist; create it, or pass --db another path")
    return None
