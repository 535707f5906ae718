"""ai-memory: a local-first long-term memory server shared by coding agents."""

__version__ = "0.1.0"
