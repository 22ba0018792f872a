"""A value as a table's cell shows it, in the terminal's tables and the web view's alike."""

from __future__ import annotations

from typing import Any


def cell_text(value: Any, grouped: bool = False) -> str:
    """Nothing for None, yes or no, a list's items joined by "; ", an integral float as an integer; with
    `grouped` (the web view's narrow cells), numbers with thousands separators and other floats to six
    significant digits."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return "; ".join(cell_text(item, grouped) for item in value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if grouped and isinstance(value, int):
        return f"{value:,}"
    if grouped and isinstance(value, float):
        return f"{value:,.6g}" if abs(value) >= 1000 else f"{value:.6g}"
    return str(value)
