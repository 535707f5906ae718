"""HTTP surfaces: the JSON API under /api/v1 (and, later, the read-only browser UI)."""
