    SELECT (SELECT count(*) FROM claims)
         - (SELECT count(*) - count(DISTINCT (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), c.content_hash, c.pointer))
            FROM claims c JOIN results r ON r.copy_id = c.copy_id WHERE r.origin IS NOT NULL)
