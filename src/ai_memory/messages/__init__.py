"""Cross-project messages: directed, claim-once mail from one project to another.

The one path that crosses project isolation on purpose, so it is authorised on both
ends (the sender writes its own project and reads the recipient's), its text goes
through the hook sanitizer before it is stored, and it is handed over as untrusted
history, never as instructions.
"""
