"""Console entry point: ``hook``, ``mcp-bridge`` and a plain ``reindex`` or ``serve`` run
before anything heavy is imported (Typer, Click, Rich and the other commands' modules).

The installed command and ``python -m ai_memory`` enter through :func:`console`, a
process of their own, which a finished direct reindex may end without the interpreter's
teardown; code that runs :func:`main` in its own process (a test runner) keeps it."""

from __future__ import annotations

import sys


def console() -> None:
    """The ``ai-memory`` command as its own process."""
    main(own_process=True)


def main(*, own_process: bool = False) -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from ai_memory.hookclient.main import run

        sys.exit(run(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "mcp-bridge":
        from ai_memory.mcp.bridge import run as run_bridge

        sys.exit(run_bridge(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "reindex":
        from ai_memory.cli.rebuild import exit_now, run_direct

        status = run_direct(sys.argv[2:])
        if status is not None and own_process:
            exit_now(status)
        if status is not None:
            sys.exit(status)
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        from ai_memory.cli.serving import run_direct as serve_direct

        status = serve_direct(sys.argv[2:])
        if status is not None:
            sys.exit(status)
    from ai_memory.cli.app import run_app

    run_app()
