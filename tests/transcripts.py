"""Builders of small A2A transcripts for tests: valid by default, broken where a test says."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_transcripts"
CITATIONS_MT = "application/vnd.upperhand.citations+json"


def citation(**overrides) -> dict:
    """A valid Citations v1 object; keyword arguments replace top-level fields (None removes one)."""
    value = {
        "study": "Versant Mega Tracker",
        "period": "W6 (April 2026)",
        "fielded": "2026-04-02/2026-04-19",
        "base": {"name": "Adults 18-74, aware of brand", "n": 4210},
        "weight": "main_weight",
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"},
        "warnings": ["Base under 100 in the 65-74 cell"],
    }
    for key, new in overrides.items():
        if new is None:
            value.pop(key, None)
        else:
            value[key] = new
    return value


def v1_task(
    task_id: str,
    parts: list[dict],
    state: str = "TASK_STATE_COMPLETED",
    context_id: str = "ctx-1",
    artifact_id: str = "answer",
) -> dict:
    """A v1.0 ProtoJSON Task with one artifact holding `parts`."""
    return {
        "id": task_id,
        "contextId": context_id,
        "status": {"state": state, "timestamp": "2026-04-20T10:00:00Z"},
        "artifacts": [{"artifactId": artifact_id, "name": artifact_id, "parts": parts}],
    }


def v1_cited_parts(data: dict | None = None, **citation_overrides) -> list[dict]:
    return [
        {"data": data if data is not None else {"share": 0.42, "n": 1210}},
        {"data": citation(**citation_overrides), "mediaType": CITATIONS_MT},
    ]


def jsonrpc_result(result: dict, rpc_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": result}


def rows(archive, sql: str, params=None) -> list[tuple]:
    return archive.con.execute(sql, params or []).fetchall()


def assert_offline_and_locked(con) -> None:
    """A connection that fetches no extension, loads none by itself, and whose settings are locked."""
    import duckdb
    import pytest

    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions', 'lock_configuration')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
        "lock_configuration": "true",
    }
    for setting in ("autoinstall_known_extensions", "autoload_known_extensions"):
        with pytest.raises(duckdb.InvalidInputException, match="locked"):
            con.execute(f"SET {setting} = true")
