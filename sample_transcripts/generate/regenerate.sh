#!/usr/bin/env bash
# Rebuilds every sample under sample_transcripts/ with the real SDKs from PyPI.
# Venvs live OUTSIDE the repo (override with VENV03 / VENV13).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV03="${VENV03:-/work/venv-sdk03}"
VENV13="${VENV13:-/work/venv-sdk13}"
PY="${PYTHON:-python3}"
export PYTHONHASHSEED=0  # stable dict key order
# upb (the default protobuf backend) iterates Struct maps in a per-process random order;
# the pure-Python backend keeps insertion order, so re-runs give byte-identical files.
export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="${PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION:-python}"
export SAMPLES_FRAGMENTS="${SAMPLES_FRAGMENTS:-$(mktemp -d)}"

[ -x "$VENV03/bin/python" ] || "$PY" -m venv "$VENV03"
[ -x "$VENV13/bin/python" ] || "$PY" -m venv "$VENV13"
"$VENV03/bin/pip" install -q 'a2a-sdk[http-server,sqlite]==0.3.26' httpx aiosqlite
"$VENV13/bin/pip" install -q 'a2a-sdk[http-server,sqlite]==1.3.0' httpx aiosqlite

cd "$HERE"
"$VENV13/bin/python" make_samples_13.py   # creates legacy-funnel/task-store.sqlite afresh
"$VENV03/bin/python" make_samples_03.py   # appends the 0.3.26 (NULL protocol_version) rows
"$PY" make_legacy.py
"$VENV13/bin/python" make_verify_demo.py  # data-layer/*.csv and verify-demo/
"$PY" merge_manifest.py
echo "samples regenerated under $(dirname "$HERE")"
