SELECT * FROM verdicts WHERE TRUE
QUALIFY row_number() OVER (PARTITION BY result_key, citation_hash ORDER BY verified_at DESC, run_id DESC) = 1
