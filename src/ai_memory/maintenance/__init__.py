"""Lifecycle operations: the server lock, backup and restore, scheduled upkeep."""
