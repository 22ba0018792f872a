SELECT coalesce(sum(rows), 0) FROM healed
