"""Containers: turn a source file into byte-exact records (lines, SSE events, documents, rows)."""
