"""An audit's findings as SARIF 2.1.0 for code hosts: Python data written by orjson, a finding at a time.

The document around the results is built whole (its rules and summary are small); each finding becomes
one result object, written as orjson indents it in `runs[0].results`, so memory holds one batch of
findings however many there are.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from ..query.listing import Listing
from .jsontext import dumps, spelled, write_chunks, write_spliced
from .paths import display_path, display_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://standards.upperhandai.com/ext/citations/v1"
RESULTS_DEPTH = 3  # runs[0].results: the document, runs, the run, then the list
_NOT_PROPERTIES = ("rule", "severity", "detail")


def write(listing: Listing, out: BinaryIO) -> int:
    from ..version import __version__  # read when called: a test fixes it

    rules = [
        {
            "id": rule.id,
            "name": rule.id,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.summary},
            "defaultConfiguration": {"level": rule.severity},
            "helpUri": TOOL_URI,
        }
        for rule in listing.rules
    ]
    run = {
        "tool": {"driver": {"name": "archiver", "version": __version__, "informationUri": TOOL_URI, "rules": rules}},
        "originalUriBaseIds": {"CWD": {"uri": Path.cwd().as_uri() + "/"}},
        "results": [],
        "properties": {"summary": listing.summary},
    }
    skeleton = dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=True)
    index = {rule.id: position for position, rule in enumerate(listing.rules)}
    members = [name for name in listing.fields if name not in _NOT_PROPERTIES]

    found = (result(finding, index, members) for finding in listing.rows)
    return write_spliced(
        out,
        skeleton,
        "results",
        RESULTS_DEPTH,
        lambda separator, depth: write_chunks(out, spelled(found, separator, depth)),
    )


def result(finding: dict, rule_index: dict[str, int], members: list[str]) -> dict[str, Any]:
    """One finding as a SARIF result: its rule, level, sentence, a stable fingerprint, where it is."""
    place = f" ({display_path(finding['source_path'])}, {finding['locator']})" if finding["locator"] else ""
    value: dict[str, Any] = {
        "ruleId": finding["rule"],
        "ruleIndex": rule_index[finding["rule"]],
        "level": finding["severity"],
        "message": {"text": display_text(finding["detail"]) + place},
        "partialFingerprints": {"archiverFinding/v1": _fingerprint(finding)},
        "properties": {name: finding[name] for name in members if finding[name] is not None},
    }
    artifact = artifact_location(finding["source_path"])
    if artifact is not None:
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if finding["line"]:
            physical["region"] = {"startLine": finding["line"]}
        location: dict[str, Any] = {"physicalLocation": physical}
        if finding["result_key"]:
            location["logicalLocations"] = [{"fullyQualifiedName": finding["result_key"], "kind": "object"}]
        value["locations"] = [location]
    reference = artifact_location(finding["reference"]) if finding.get("reference") else None
    if reference is not None:
        value["relatedLocations"] = [
            {"id": 1, "physicalLocation": {"artifactLocation": reference}, "message": {"text": "the origin copy"}}
        ]
    return value


def _fingerprint(finding: dict) -> str:
    """The same finding in the same place keeps its fingerprint from one audit to the next, wherever the
    checkout is: its paths are taken relative to the working directory."""
    identity = (
        display_path(finding["source_path"]) if name == "source_path" else finding[name]
        for name in ("rule", "result_key", "source_path", "locator", "artifact_id", "part_index", "detail")
    )
    identity = (display_text(value) if isinstance(value, str) else value for value in identity)
    return hashlib.sha256("\x1f".join(map(str, identity)).encode()).hexdigest()[:32]


@lru_cache(maxsize=4096)
def artifact_location(path: str) -> dict[str, str] | None:
    """SARIF's artifactLocation of a source file: relative to the working directory when beneath it."""
    if not Path(path).is_absolute():
        return None
    shown = display_path(path)
    if shown != path:
        return {"uri": Path(shown).as_posix(), "uriBaseId": "CWD"}
    return {"uri": Path(path).as_uri()}
