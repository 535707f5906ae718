"""Prometheus metrics and the status answer; one registry per app, passed explicitly."""
