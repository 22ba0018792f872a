-- Origin copies: a stored copy read from a spool segment of `archiver record` (the proxy in front of an
-- agent) is what the agent itself sent. `origin` is the spool directory it was recorded in (NULL for
-- every other copy). The copies of one result in the segments of one spool are one origin copy
-- (`origin_copies`, made in archiver/store/views.py): a stream split by rotation, or a send and a later
-- get, are never copies that could be compared with, or counted beside, each other.
ALTER TABLE results ADD COLUMN origin VARCHAR;
