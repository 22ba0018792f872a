SELECT count(*) FROM records WHERE status = 'quarantined'
