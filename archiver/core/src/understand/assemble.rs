//! The stored copies of results found in one source file (`archiver/understand/assemble.py`): a result
//! is one Task (its artifacts plus the parts of agent messages in its status and history) or one
//! standalone agent Message; stream events and later snapshots of a task in one file merge into one
//! copy. Memory is bounded: tasks touched least recently wait on disk.
