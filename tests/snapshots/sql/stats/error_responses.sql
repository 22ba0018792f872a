SELECT count(*) FROM rpc_errors
