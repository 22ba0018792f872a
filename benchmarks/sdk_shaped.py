"""An SDK-shaped corpus: the transcripts of `sample_transcripts/` (real output of the A2A SDKs) copied
many times over, each copy under ids of its own, so that every copy is new evidence to the archive.

Text transcripts (JSON, JSON Lines, SSE captures, logs, gzip-compressed or not) are copied with every
task, context, message and artifact id given the copy's suffix; the SDK task-store databases are left
out, since their ids sit inside SQLite pages.

    python -m benchmarks.sdk_shaped --copies 300 --out benchmarks/corpus/sdk-300
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_transcripts"
TEXT = (".json", ".jsonl", ".sse", ".log")
NOT_TRANSCRIPTS = {"manifest.json"}
# an id as the SDKs and the sample generators write them: a UUID or task-/ctx-/msg-/art-<name>
IDS = re.compile(rb'"((?:task|ctx|msg|art)-[^"\\]*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')


def transcripts() -> list[Path]:
    """The sample transcripts that can be copied under new ids, in a stable order."""
    found = []
    for path in sorted(SAMPLES.rglob("*")):
        relative = path.relative_to(SAMPLES)
        if relative.parts[0] in ("generate", "data-layer") or path.name in NOT_TRANSCRIPTS:
            continue
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        if path.is_file() and name.endswith(TEXT):
            found.append(path)
    return found


def renamed(text: bytes, copy: int) -> bytes:
    suffix = b"-c%d" % copy
    return IDS.sub(lambda m: b'"' + m.group(1) + suffix + b'"', text)


def generate(out: Path, copies: int) -> dict:
    """Write `copies` copies of the sample transcripts under `out`, and their totals to `truth.json`."""
    out.mkdir(parents=True, exist_ok=True)
    files, size = 0, 0
    sources = [(path, path.read_bytes()) for path in transcripts()]
    for copy in range(copies):
        for path, content in sources:
            target = out / f"copy-{copy:05d}" / path.relative_to(SAMPLES)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.name.endswith(".gz"):
                data = gzip.compress(renamed(gzip.decompress(content), copy), mtime=0)
            else:
                data = renamed(content, copy)
            target.write_bytes(data)
            files, size = files + 1, size + len(data)
    truth = {"copies": copies, "files": files, "bytes": size}
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    (out / ".archiverignore").write_text("truth.json\n")
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.copies), indent=1))


if __name__ == "__main__":
    main()
