"""A source version: what a file's bytes are to the archive.

A version is its bytes (SHA-256). The same bytes found at another path are one version with a path
alias. At one path, a version whose bytes begin with the bytes of the version stored before it (a
growing log) extends that one and replaces its index rows; any other new bytes at a path are a new
version beside the earlier ones. A chain of versions that each extend the one before is a lineage,
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
    replaces: str | None = None
    """The SHA-256 of the version at this path that this one extends (its index rows give way)."""


def version_key(path: str, lineage: str, first_lineage: str | None) -> str:
    """What ids are hashed with: the path for the path's first lineage, else the path and lineage
    (`key_hash` joins its parts with the same separator, so this equals hashing them as two parts)."""
    return path if first_lineage in (None, lineage) else f"{path}\x1f{lineage}"
