"""The cited cells, kept with the claim index: what the claims resting on each citation state, per cell. A row per
agent, citation (with its fields), cell (the core's name of the cell a claim fills, else its pointer) and unit:
how many claims, how many of them hold a number, the numbers' sum, least and greatest. serve's subject pages (a
study's, a period's, a column's, a table's, an agent's) read them: per period, the citations and the numbers
stated (`serve.data.by_period`); per quantity, the least, mean and greatest number and base
(`serve.data.cited_values`). Aggregated at read time over the claims of a third of the archive, those took 2.6 s at
10M claims and 26 s at 100M.

The rows are an aggregate of the `claim_index` table as it stands (`cells`, over every row: `DEFINITION`), changed
by each write to the index in that write's transaction (`store.kept._make_index`, through `changing`): counts and
sums by the difference of the rows it removed and added; the least (and the greatest) from the rows added, unless a
removed row held it and no added row reaches it, when the citation's rows are made again from the index. A sum of
floating-point numbers depends on the order it is added in, so a kept sum equals its definition's to within
rounding (`DIFFERING`), as DuckDB's own `sum` over several threads does.

While results are pending, the index is not yet what its definition makes of the stored copies: readers then
aggregate `claim_citations` instead (`source`), so an answer never depends on whether a refresh ran.
"""

from __future__ import annotations

import duckdb

from .connection import drop_temporary
from .tables import CITED_CELLS, CLAIM_INDEX, CLAIM_INDEX_PENDING
from .views import IN_DUCKDB_FILE

KEYS = (
    "agent", "citation_hash", "study", "period", "fielded", "source_table", "source_column", "source_function",
    "base_n", "valid", "inferred", "cell", "unit",
)  # fmt: skip
"""What a row is of: the agent of the claims' counted copies, the citation they rest on and its fields, the cell and
the unit."""

_KEYS = ", ".join(KEYS)


def cells(chosen: str = "TRUE", relation: str = CLAIM_INDEX) -> str:
    """SQL of the cited cells of the claims of `relation` (the claim index, or `claim_citations`) that `chosen` (a
    condition on its columns) chooses: claims without a citation have none."""
    keyed = ", ".join("coalesce(cell, pointer) AS cell" if key == "cell" else key for key in KEYS)
    return f"""
        SELECT {keyed}, count(*) AS claims, count(value) AS valued, sum(value) AS value_sum,
               min(value) AS low, max(value) AS high
        FROM {relation} WHERE citation_hash IS NOT NULL AND {chosen} GROUP BY ALL"""


DEFINITION = cells()
"""Every cited cell of the claim index: what `cited_cells_kept` keeps."""


def source(con: duckdb.DuckDBPyConnection) -> str:
    """What readers read the cited cells from: the kept rows, or while results are pending (the claim index not yet
    every result's rows), the same aggregate of `claim_citations` (`views.KEPT_CLAIMS`)."""
    if con.execute(f"SELECT EXISTS (SELECT 1 FROM {CLAIM_INDEX_PENDING})").fetchone()[0]:
        return f"({cells(relation='claim_citations')})"
    return CITED_CELLS


READ = ", ".join((*KEYS, "pointer", "value"))
"""What `cells` reads of a claim index row."""


def changing(con: duckdb.DuckDBPyConnection, chosen: str, removing: str, adding: str) -> None:
    """In the caller's transaction: the claim index rows `chosen` (a condition on `result_key`) chooses removed and
    added (`removing`, a DELETE of them; `adding`, an INSERT of their new rows), and the kept cells changed by
    what they removed and added. The rows removed are read first, when there are any (an ingest's new results have
    none: finding so reads one column, not the cells' fifteen); the rows added, in a DuckDB file, are handed back by
    the INSERT (RETURNING; a DuckLake table returns nothing, so a lake's are read after). At 10M claims each read of
    the rows took 3-4 s a batch of 5,000 results (a DELETE's RETURNING, 9.5 s, is slower than reading them first)."""
    try:
        if con.execute(f"SELECT EXISTS (SELECT 1 FROM {CLAIM_INDEX} WHERE {chosen})").fetchone()[0]:
            con.execute(f"CREATE OR REPLACE TEMP TABLE cells_removed AS {cells(chosen)}")
            con.execute(removing)
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE cells_removed AS {cells('FALSE')}")
        if con.execute(f"SELECT {IN_DUCKDB_FILE}").fetchone()[0]:
            con.register("cells_added_rows", con.execute(f"{adding} RETURNING {READ}").to_arrow_table())
            con.execute(f"CREATE OR REPLACE TEMP TABLE cells_added AS {cells(relation='cells_added_rows')}")
            con.unregister("cells_added_rows")
        else:
            con.execute(adding)
            con.execute(f"CREATE OR REPLACE TEMP TABLE cells_added AS {cells(chosen)}")
        _merge(con)
    finally:
        drop_temporary(con, "cells_removed", "cells_added", "cells_touched", "cells_merged")


def _merge(con: duckdb.DuckDBPyConnection) -> None:
    """The kept rows of every citation the change touched, made again: kept, less removed, plus added. Where a
    removed row held the least (or greatest) number and no added row reaches it, the row's least is not known from
    these: its citation's rows are made again from the index."""
    con.execute(
        """CREATE OR REPLACE TEMP TABLE cells_touched AS
           SELECT DISTINCT citation_hash FROM (SELECT citation_hash FROM cells_removed
                                               UNION ALL SELECT citation_hash FROM cells_added)"""
    )
    touched = "citation_hash IN (SELECT citation_hash FROM cells_touched)"
    (merging,) = con.execute(
        f"SELECT EXISTS (SELECT 1 FROM cells_removed) OR EXISTS (SELECT 1 FROM {CITED_CELLS} WHERE {touched})"
    ).fetchone()
    if not merging:  # new citations only (a first ingest, new results citing anew): their rows as made
        con.execute(f"INSERT INTO {CITED_CELLS} BY NAME SELECT * FROM cells_added")
        return
    signed = "CASE side WHEN 'removed' THEN -{0} ELSE {0} END"
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE cells_merged AS
            WITH sides AS (
                SELECT *, 'kept' AS side FROM {CITED_CELLS} WHERE {touched}
                UNION ALL BY NAME SELECT *, 'removed' AS side FROM cells_removed
                UNION ALL BY NAME SELECT *, 'added' AS side FROM cells_added),
            grouped AS (
                SELECT {_KEYS}, sum({signed.format("claims")}) AS claims, sum({signed.format("valued")}) AS valued,
                       sum({signed.format("value_sum")}) AS value_sum,
                       min(low) FILTER (WHERE side = 'kept') AS kept_low,
                       min(low) FILTER (WHERE side = 'removed') AS removed_low,
                       min(low) FILTER (WHERE side = 'added') AS added_low,
                       max(high) FILTER (WHERE side = 'kept') AS kept_high,
                       max(high) FILTER (WHERE side = 'removed') AS removed_high,
                       max(high) FILTER (WHERE side = 'added') AS added_high
                FROM sides GROUP BY ALL)
            SELECT {_KEYS}, claims, valued, CASE WHEN valued > 0 THEN value_sum END AS value_sum,
                   CASE WHEN valued = 0 THEN NULL
                        WHEN removed_low IS NULL OR removed_low > kept_low THEN least(kept_low, added_low)
                        WHEN added_low <= kept_low THEN added_low END AS low,
                   CASE WHEN valued = 0 THEN NULL
                        WHEN removed_high IS NULL OR removed_high < kept_high THEN greatest(kept_high, added_high)
                        WHEN added_high >= kept_high THEN added_high END AS high
            FROM grouped WHERE claims > 0"""
    )
    unknown = "SELECT citation_hash FROM cells_merged WHERE valued > 0 AND (low IS NULL OR high IS NULL)"
    con.execute(f"DELETE FROM {CITED_CELLS} WHERE {touched}")
    con.execute(f"INSERT INTO {CITED_CELLS} BY NAME SELECT * FROM cells_merged WHERE citation_hash NOT IN ({unknown})")
    con.execute(f"INSERT INTO {CITED_CELLS} BY NAME {cells(f'citation_hash IN ({unknown})')}")


def rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """Make every kept cell again from the claim index (`archiver db repair`, and schema 19's first making), in the
    caller's transaction."""
    con.execute(f"DELETE FROM {CITED_CELLS}")
    con.execute(f"INSERT INTO {CITED_CELLS} BY NAME {DEFINITION}")


DIFFERING = f"""
    SELECT coalesce(citation_hash, '') || ' ' || coalesce(cell, '') || coalesce(' (' || unit || ')', '')
           || coalesce(' of ' || agent, '') || ': ' || CASE WHEN count(*) FILTER (WHERE side = 'kept') = 0
                                                            THEN 'not kept'
                                                            WHEN count(*) FILTER (WHERE side = 'made') = 0
                                                            THEN 'kept, not in the index' ELSE 'differs' END
    FROM (SELECT *, 'kept' AS side FROM {CITED_CELLS} UNION ALL BY NAME SELECT *, 'made' AS side FROM ({DEFINITION}))
    GROUP BY {_KEYS}
    HAVING count(*) FILTER (WHERE side = 'kept') <> 1 OR count(*) FILTER (WHERE side = 'made') <> 1
        OR min(claims) <> max(claims) OR min(valued) <> max(valued)
        OR count(low) NOT IN (0, 2) OR count(high) NOT IN (0, 2) OR count(value_sum) NOT IN (0, 2)
        OR min(low) <> max(low) OR min(high) <> max(high)
        OR abs(max(value_sum) - min(value_sum)) > 1e-9 * max(valued) * greatest(abs(max(high)), abs(min(low)))"""
"""The kept cells that are not their definition's, one line each (keys, then what differs): none, when kept as they
should be. A sum may differ by rounding: at most a billionth of the largest the numbers could sum to."""
