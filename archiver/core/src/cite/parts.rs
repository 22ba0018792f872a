//! What Citations v1 reads in one Part: the citation it is, or the claims it states.
