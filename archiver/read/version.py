"""A source version: what a file's bytes are to the archive.

A version is its bytes (SHA-256). The same bytes found at another path are one version with a path
alias. At one path, a version whose bytes begin with the bytes of the version recorded before it (a
growing log) extends that one and replaces its index rows; any other new bytes at a path are a new
version beside the earlier ones. Where the version recorded before is an alias (the path held bytes
stored at another path, as a second mount of a share does), the extension replaces the index rows of
the aliased version, wherever they are stored, so the log's results are still counted once. So does a
log rotated after it grew: a new lineage at `app.log.1` that begins with the bytes of the latest version
at `app.log` (`load.versions.rotated_from`). A chain of versions
that each extend the one before is a lineage,
named by its first version. Ids of records, stored copies and cards are hashed with the version's
`key`: the path for the first lineage found at a path (so ids made before versions existed stay
valid), the path and lineage for a later one (so two lineages at one path never share an id).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceVersion:
    path: str
    sha256: str
    size: int
    lineage: str
    key: str
    replaces: tuple[str, str] | None = None
    """(path, SHA-256) of the stored version this one extends: its index rows give way. The path is this
    one's, or where the bytes this path held as an alias are stored."""

    @property
    def extends_here(self) -> bool:
        """Whether this version extends one stored at its own path (whose records it shares)."""
        return self.replaces is not None and self.replaces[0] == self.path


def version_key(path: str, lineage: str, first_lineage: str | None) -> str:
    """What ids are hashed with: the path for the path's first lineage, else the path and lineage
    (`key_hash` joins its parts with the same separator, so this equals hashing them as two parts)."""
    return path if first_lineage in (None, lineage) else f"{path}\x1f{lineage}"
