"""Claims: the numeric leaves of quantitative data, addressed by RFC 6901 JSON Pointer."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def numeric_leaves(data: Any, pointer: str = "") -> Iterator[tuple[str, int | float]]:
    """Every int or float leaf (never a bool, never a numeric-looking string) with its pointer."""
    if isinstance(data, bool):
        return
    if isinstance(data, (int, float)):
        yield pointer, data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from numeric_leaves(value, f"{pointer}/{escape_token(str(key))}")
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from numeric_leaves(value, f"{pointer}/{index}")
