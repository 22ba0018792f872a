SELECT count(DISTINCT result_key) FROM origin_copies
