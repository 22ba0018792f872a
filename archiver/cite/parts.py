"""What Citations v1 reads in one Part of a result: the one definition the index's rows (and through them
every audit rule) and the recording proxy's live check share."""

from __future__ import annotations

from typing import Any

from .citations import Citation, citation_of
from .claims import numeric_leaves


def judged(kind: str, data: Any, media_type: str | None, role: str) -> tuple[Citation | None, list]:
    """(the citation the Part is, None) or (None, the claims it states: its numeric leaves with their pointers).
    Only an agent's data Part can be either; any other Part is (None, [])."""
    if kind != "data" or role != "agent":
        return None, []
    citation = citation_of(data, media_type)
    if citation is not None:
        return citation, []
    return None, numeric_leaves(data)
