"""Benchmarks: a corpus generator and the runner behind `benchmarks/run`."""
