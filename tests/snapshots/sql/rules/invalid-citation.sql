SELECT result_key, task_id, message_id, context_id, artifact_id, part_index, source_path, locator,
       line, NULL AS severity,
       citation_part || ' fails Citations v1: '
       || coalesce(nullif(array_to_string(problems, '; '), ''), 'fails the spec') AS detail
FROM audit_cited_parts
WHERE first_invalid
