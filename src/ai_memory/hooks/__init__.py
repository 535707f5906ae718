"""Capture: hook ingest, sanitizer, sessions, handoffs and the session-start brief."""
