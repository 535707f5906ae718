"""``ai-memory doctor``: end-to-end checks of one install, each with the command that fixes it."""
