"""`archiver record`: a recording reverse proxy in front of an A2A agent.

It forwards every request and response unchanged (`proxy`), hands what passed to one background thread
(`background`) that appends it to the spool's segment files (`segments`, the spool contract of
docs/record.md) and checks each completed result against the Citations v1 rules that need only that
result (`conformance`); closed segments may be ingested into an archive by the same process (`ingesting`).
"""

# The defaults of `archiver record`, read by the command line and the library alike.
HOST, PORT = "127.0.0.1", 8787
SEGMENT_BYTES = 64 * 2**20
SEGMENT_SECONDS = 60.0
RECORD_MAX_BYTES = 32 * 2**20
DECODE_MAX_BYTES = 64 * 2**20
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 300.0
