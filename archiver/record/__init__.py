"""`archiver record`: a recording reverse proxy in front of an A2A agent.

It forwards every request and response unchanged (`proxy`), hands what passed to one background thread
(`background`) that appends it to the spool's segment files (`segments`, the spool contract of
docs/record.md) and checks each completed result against the Citations v1 rules that need only that
result (`conformance`); closed segments may be ingested into an archive by the same process (`ingesting`).
"""
