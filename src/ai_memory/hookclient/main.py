"""``ai-memory hook``: placeholder until capture lands."""

from __future__ import annotations


def run(argv: list[str]) -> int:
    return 0
