"""Merges the generators' manifest fragments into sample_transcripts/manifest.json.

The fragments were written by the generators from their own scenario
definitions; nothing here reads the sample files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FRAG_DIR, OUT

ORDER = ["sdk13", "sdk03", "legacy", "verify", "js", "fasta2a", "python_a2a", "go", "java"]


def main():
    """Merges every generator's fragment; `merge_manifest.py --replace NAME` merges only NAME's, in place of what
    the manifest holds under its folders (one generator re-run without the toolchains of the others)."""
    if sys.argv[1:2] == ["--replace"]:
        merge([without_folders_of(sys.argv[2]), fragment(sys.argv[2])])
    else:
        merge([fragment(name) for name in ORDER])


def fragment(name: str) -> dict:
    return json.loads((FRAG_DIR / f"{name}.json").read_text(encoding="utf-8"))


def without_folders_of(name: str) -> dict:
    """The manifest as it is, less every entry under a folder of fragment `name`'s files."""
    folders = tuple({entry["path"].split("/")[0] + "/" for entry in fragment(name)["files"]})

    def mine(path: str) -> bool:
        return path.startswith(folders)

    manifest = json.loads((OUT / "manifest.json").read_text(encoding="utf-8"))
    for result in manifest["results"]:
        result["copies"] = [c for c in result["copies"] if not mine(c["path"])]
    return {
        "files": [f for f in manifest["files"] if not mine(f["path"])],
        "agents": [a for a in manifest["agents"] if not mine(a["card"])],
        "results": [r for r in manifest["results"] if r["copies"]],
        "error_responses": [e for e in manifest["error_responses"] if not mine(e["path"])],
        "planted": [p for p in manifest["planted"] if not mine(p["path"])],
    }


def merge(fragments: list[dict]) -> None:
    merged = {"files": [], "agents": [], "results": [], "error_responses": [], "planted": []}
    results = {}
    for frag in fragments:
        merged["files"] += frag["files"]
        for a in frag["agents"]:
            if all(a["name"] != b["name"] for b in merged["agents"]):
                merged["agents"].append(a)
        for r in frag["results"]:
            if r["key"] in results:
                results[r["key"]]["copies"] += r["copies"]
            else:
                results[r["key"]] = r
        merged["error_responses"] += frag["error_responses"]
        merged["planted"] += frag["planted"]
    merged["files"].sort(key=lambda f: f["path"])
    merged["results"] = sorted(results.values(), key=lambda r: r["key"])
    (OUT / "manifest.json").write_text(json.dumps(merged, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
