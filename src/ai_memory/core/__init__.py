"""Domain types, identities, errors and page paths. No I/O lives here."""
