SELECT count(*) FROM sources WHERE alias_of IS NOT NULL
