"""Import of past sessions from the agents' own session stores (``ai-memory backfill``).

Each agent has one reader, which turns its transcripts into :class:`~.model.Transcript`
values; :mod:`.replay` turns those into the hook events live capture would have sent.
"""
