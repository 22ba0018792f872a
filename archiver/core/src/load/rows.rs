//! Row values per table for one file (or a chunk of small files), as `archiver/load/rows.py` made them.
