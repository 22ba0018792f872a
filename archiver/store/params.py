"""Lists of strings as bound parameters.

DuckDB binds a Python list parameter value by value: 3,600 paths took 2.3 s to bind. The same list
as one JSON text binds at once and becomes a list in SQL (23 ms): bind `strings(values)` where the
SQL says `STRINGS`.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

STRINGS = "CAST(json(?) AS VARCHAR[])"


def strings(values: Iterable[str | None]) -> str:
    return orjson.dumps(list(values)).decode()
