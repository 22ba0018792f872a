"""The archive on disk: connections, locking and migrations."""
