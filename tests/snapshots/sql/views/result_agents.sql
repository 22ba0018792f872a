SELECT copy_id, agent FROM (
    SELECT x.*, coalesce(in_file.agent, in_dir.agent) AS agent
    FROM (SELECT * FROM results r WHERE TRUE) x
    LEFT JOIN (SELECT source_path, min(name) AS agent FROM agent_cards GROUP BY source_path) in_file
           ON in_file.source_path = x.source_path
    LEFT JOIN (SELECT source_dir, min(name) AS agent FROM agent_cards GROUP BY source_dir) in_dir
           ON in_dir.source_dir = x.source_dir)
