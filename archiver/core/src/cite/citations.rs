//! A citation Part: recognition, flattening and the spec's validity rules (`archiver/cite/citations.py`).
