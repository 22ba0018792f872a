    SELECT (SELECT count(*) FROM parts p WHERE TRUE)
         - (SELECT count(*) - count(DISTINCT (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash))
            FROM parts p JOIN results r ON r.copy_id = p.copy_id WHERE r.origin IS NOT NULL AND TRUE)
