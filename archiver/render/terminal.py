"""Text for a terminal: what a file name, a transcript or an error message holds is shown, never acted on.

A name or a value may carry control characters: an escape sequence that recolours the terminal, retitles
its window or writes the clipboard, a bare carriage return that overwrites the line before it, a
bidirectional override that shows text in another order than it is. Each is written as its escape
(`\\x1b`, `\\r`, `\\u202e`); line feeds and tabs stay as they are.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def printable(text: str) -> str:
    """`text` with every control character but line feed and tab written as its escape."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count and what it counts, the noun in the plural but for one: "1 stored copy", "2 stored copies"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
