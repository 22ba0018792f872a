"""Text for a terminal: what a file name, a transcript or an error message holds is shown, never acted on.

A name or a value may carry control characters: an escape sequence that recolours the terminal, retitles
its window or writes the clipboard, a bare carriage return that overwrites the line before it, a
bidirectional override that shows text in another order than it is. Each is written as its escape
(`\\x1b`, `\\r`, `\\u202e`); line feeds and tabs stay as they are.
"""

from __future__ import annotations

import os
import re
from typing import Any

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def printable(text: str) -> str:
    """`text` with every control character but line feed and tab written as its escape."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count and what it counts, the noun in the plural but for one: "1 stored copy", "2,130 stored copies"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


TONES = {"bad": "31", "warning": "33", "good": "32"}
"""The colours of what a line or a cell says: red for what is wrong, yellow for a warning, green for what
re-ran and reproduced (ANSI SGR codes)."""


def wants_colour(stream: Any) -> bool:
    """Whether to colour what is written to `stream`: a terminal, unless `NO_COLOR` is set (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def painted(text: str, tone: str | None) -> str:
    """`text` (already printable) in the colour of `tone`, as it is when the tone has none."""
    code = TONES.get(tone or "")
    return f"\x1b[{code}m{text}\x1b[0m" if code and text else text
