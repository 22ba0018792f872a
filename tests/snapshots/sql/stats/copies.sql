    SELECT count(*) FILTER (WHERE r.origin IS NULL) + count(DISTINCT coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id)) FILTER (WHERE r.origin IS NOT NULL)
    FROM results r
