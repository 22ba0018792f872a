"""Render for people and machines: transcripts as text or HTML (each number with its citation directly
beneath it), and listings of rows, findings or verdicts in the output formats of `formats`."""
