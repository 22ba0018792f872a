SELECT result_key, task_id, message_id, context_id, artifact_id, part_index, source_path, locator,
       line, NULL AS severity,
       citation_part || ' rests on base ' || audit_quote(base_name) || ' of n = ' || audit_g(base_n)
       || ', below the minimum base of ' || audit_g(CAST($min_base AS DOUBLE)) AS detail
FROM audit_cited_parts
WHERE first_small
