SELECT * FROM claim_citations
