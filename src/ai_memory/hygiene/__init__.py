"""Fixing mistakes: purge, move, rename, merge and export the memory of sessions and projects.

Each operation is a function taking the running parts (Runtime, Wiki, Writer), its
arguments and ``dry_run``, and returning a :class:`~ai_memory.hygiene.report.HygieneReport`.
The wiki files, the git checkpoint and the SQLite index stay equal after each one, so
``ai-memory reindex`` afterwards changes nothing; each records an ``audit_log`` row.
"""
