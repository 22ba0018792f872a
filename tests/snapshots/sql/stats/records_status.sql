SELECT count(*) FROM records WHERE status = 'ok' AND yields = 'status'
