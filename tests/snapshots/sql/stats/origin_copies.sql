SELECT count(*) FROM origin_copies
