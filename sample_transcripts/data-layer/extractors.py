"""Extractors of the Verify Demo Tracker, declared in archiver-data-layer.toml beside this file.

Each takes the cited table as a DuckDB relation, the cited column and the citation's context
(`weight`: the weight column, or None when unweighted; `period`, `base_n`, ...) and returns JSON
shaped like the answer the agent gave: integers for counts, floats for shares.
"""

__version__ = "1.0"


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def extract_funnel(relation, column, context):
    """Share of respondents answering 1 to `column` in each age segment, weighted by the citation's
    weight column, with each segment's unweighted base count and the total base."""
    weight = _quote(context.weight) if context.weight else "1.0"
    rows = relation.query(
        "survey",
        f"""
        SELECT segment, sum({weight} * ({_quote(column)} = 1)::DOUBLE) / sum({weight}) AS share, count(*) AS n
        FROM survey GROUP BY segment ORDER BY segment""",
    ).fetchall()
    return {
        "segments": [{"name": name, "share": share, "n": n} for name, share, n in rows],
        "total": sum(n for _, _, n in rows),
    }
