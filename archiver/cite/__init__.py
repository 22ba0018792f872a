"""The Citations v1 rules: what a citation is, when it is valid, and what a claim is."""
