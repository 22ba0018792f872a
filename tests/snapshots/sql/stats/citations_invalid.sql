    SELECT (SELECT count(*) FROM citations c WHERE NOT c.valid)
         - (SELECT count(*) - count(DISTINCT (coalesce('origin' || chr(31) || r.origin || chr(31) || r.result_key, r.copy_id), p.location, p.artifact_id, coalesce(p.message_id, r.message_id), p.part_index, p.content_hash))
            FROM citations c JOIN parts p ON p.part_id = c.part_id JOIN results r ON r.copy_id = p.copy_id WHERE r.origin IS NOT NULL AND NOT c.valid)
