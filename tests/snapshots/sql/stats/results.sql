SELECT count(DISTINCT result_key) FROM results
