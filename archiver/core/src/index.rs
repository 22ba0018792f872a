//! One source (or a chunk of small ones) from its bytes to Arrow batches: read its records, understand
//! them, apply the Citations v1 rules and hand over rows a batch at a time (`archiver/prepare.py`).
