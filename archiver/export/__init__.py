"""Export: raw records back out byte for byte, and the index as Parquet for other engines."""
