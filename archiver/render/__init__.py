"""Render results for people: each number with its citation directly beneath it."""
