#!/usr/bin/env bash
# Rebuilds every sample under sample_transcripts/ with the real SDKs from PyPI.
# Venvs live OUTSIDE the repo (override with VENV03 / VENV13). The JavaScript SDK's samples need
# Node (>= 20) and npm: `npm ci` installs the pinned packages of js/package-lock.json into
# js/node_modules (gitignored); better-sqlite3 is built from source when no prebuilt binary can be
# downloaded, against the local Node headers (/usr/include/node) when they are there.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV03="${VENV03:-/work/venv-sdk03}"
VENV13="${VENV13:-/work/venv-sdk13}"
VENVFASTA2A="${VENVFASTA2A:-/work/venv-fasta2a}"  # pydantic's fasta2a, an A2A server of its own
VENVPYA2A="${VENVPYA2A:-/work/venv-pya2a}"        # python-a2a, an A2A library of its own
PY="${PYTHON:-python3}"
export PYTHONHASHSEED=0  # stable dict key order
# upb (the default protobuf backend) iterates Struct maps in a per-process random order;
# the pure-Python backend keeps insertion order, so re-runs give byte-identical files.
export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="${PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION:-python}"
export SAMPLES_FRAGMENTS="${SAMPLES_FRAGMENTS:-$(mktemp -d)}"

command -v node >/dev/null || { echo "regenerate.sh: node (>= 20) and npm are needed for the JavaScript SDK samples" >&2; exit 1; }
command -v go >/dev/null || { echo "regenerate.sh: go (>= 1.25) is needed for the Go SDK samples" >&2; exit 1; }
[ -x "$VENV03/bin/python" ] || "$PY" -m venv "$VENV03"
[ -x "$VENV13/bin/python" ] || "$PY" -m venv "$VENV13"
"$VENV03/bin/pip" install -q 'a2a-sdk[http-server,sqlite]==0.3.26' httpx aiosqlite
"$VENV13/bin/pip" install -q 'a2a-sdk[http-server,sqlite]==1.3.0' httpx aiosqlite
[ -x "$VENVFASTA2A/bin/python" ] || "$PY" -m venv "$VENVFASTA2A"
[ -x "$VENVPYA2A/bin/python" ] || "$PY" -m venv "$VENVPYA2A"
"$VENVFASTA2A/bin/pip" install -q 'fasta2a==2.1.1' 'pydantic-ai-slim==2.68.0' httpx
"$VENVPYA2A/bin/pip" install -q 'python-a2a==0.5.10'

cd "$HERE"
"$VENV13/bin/python" make_samples_13.py   # creates legacy-funnel/task-store.sqlite afresh
"$VENV03/bin/python" make_samples_03.py   # appends the 0.3.26 (NULL protocol_version) rows
"$PY" make_legacy.py
"$VENV13/bin/python" make_verify_demo.py  # data-layer/*.csv and verify-demo/
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_version.h ]; then export npm_config_nodedir=/usr; fi
(cd js && npm ci --no-audit --no-fund && node make_samples_js.mjs)  # kestrel-mobility/: the JavaScript SDK's samples
"$VENVFASTA2A/bin/python" make_samples_fasta2a.py   # fasta2a-pulse/, fasta2a-pydantic-ai/
"$VENVPYA2A/bin/python" make_samples_python_a2a.py  # python-a2a-harbour/
(cd go && go run .)  # go-osprey-energy/: the Go SDK's samples (a2a-go, pinned by go/go.sum)
"$PY" merge_manifest.py
echo "samples regenerated under $(dirname "$HERE")"
