"""Console entry point. ``ai-memory hook`` is dispatched before anything heavy is imported."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from ai_memory.hookclient.main import run

        sys.exit(run(sys.argv[2:]))
    from ai_memory.cli.app import run_app

    run_app()
