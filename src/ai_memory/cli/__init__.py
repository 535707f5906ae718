"""The ``ai-memory`` command line: thin HTTP clients plus local lifecycle operations."""
