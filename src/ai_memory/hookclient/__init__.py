"""The ``ai-memory hook`` command: standard library only, so agents never wait on imports."""
