SELECT count(DISTINCT path) FROM sources WHERE alias_of IS NULL
