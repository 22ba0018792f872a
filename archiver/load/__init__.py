"""Load: canonical results become columnar batches, written to the archive one source file per transaction."""
