"""Query the index: lineage questions, read-only SQL, and rows streamed out in batches (as a
`archiver.query.listing.Listing`, which every output format renders)."""
