//! Claims: the numeric leaves of quantitative data, addressed by RFC 6901 JSON Pointer.
