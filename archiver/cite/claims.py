"""Claims: the numeric leaves of quantitative data, addressed by RFC 6901 JSON Pointer."""
from __future__ import annotations

from typing import Any


def escape_token(token: str) -> str:
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def numeric_leaves(data: Any) -> list[tuple[str, int | float]]:
    """Every int or float leaf (never a bool, never a numeric-looking string) with its pointer."""
    found: list[tuple[str, int | float]] = []
    _collect(data, "", found)
    return found


def _collect(data: Any, pointer: str, found: list) -> None:
    kind = type(data)
    if kind is int or kind is float:
        found.append((pointer, data))
    elif kind is dict:
        for key, value in data.items():
            inner = type(value)
            if inner is int or inner is float or inner is dict or inner is list:
                _collect(value, f"{pointer}/{escape_token(key if type(key) is str else str(key))}", found)
    elif kind is list:
        for index, value in enumerate(data):
            inner = type(value)
            if inner is int or inner is float or inner is dict or inner is list:
                _collect(value, f"{pointer}/{index}", found)
