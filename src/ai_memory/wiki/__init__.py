"""The markdown wiki: the source of truth, and the one write path into it."""
