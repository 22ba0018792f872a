"""An extractor's return value as plain JSON-shaped Python, however the extractor computed it.

Extractors written with pandas and numpy return their types: a `numpy.float64`, an array, a `Series`
(an object of its index and values), a one-row `DataFrame` (its row as an object; more rows: a list of
row objects), a `Decimal` from DuckDB. Each becomes the JSON value it stands for, without importing
numpy or pandas (recognised by their type's module). A NaN or an infinity stays a float, so the
comparison can say "the extractor returned NaN" rather than "re-derived nothing".
"""

from __future__ import annotations

import math
from datetime import date, datetime, time
from decimal import Decimal

NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def plain(value):
    """`value` as None, bool, int, float, str, list and dict (str keys); TypeError for what is not JSON."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    library = type(value).__module__.split(".")[0]
    if library == "pandas":
        return _pandas(value)
    if library == "numpy":
        return plain(value.tolist())  # a scalar's item, or an array's nested lists
    raise TypeError(f"{type(value).__module__}.{type(value).__name__} is not JSON")


def non_finite(value) -> str | None:
    """ "NaN", "Infinity" or "-Infinity" for such a float, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return NON_FINITE[repr(value)]
    return None


def _pandas(value):
    kind = type(value).__name__
    if kind == "Series":
        return plain(value.to_dict())
    if kind == "DataFrame":
        rows = value.to_dict("records")
        return plain(rows[0] if len(rows) == 1 else rows)
    if kind in ("NAType", "NaTType"):
        return None
    if kind == "Timestamp":
        return value.isoformat()
    raise TypeError(f"pandas.{kind} is not JSON")


def _key(key) -> str:
    key = plain(key)
    return key if isinstance(key, str) else str(key)
