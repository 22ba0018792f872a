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

ORDER = ["sdk13", "sdk03", "legacy", "verify", "js", "fasta2a", "python_a2a", "go"]


def main():
    merged = {"files": [], "agents": [], "results": [], "error_responses": [], "planted": []}
    results = {}
    for name in ORDER:
        frag = json.loads((FRAG_DIR / f"{name}.json").read_text(encoding="utf-8"))
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
