"""What agents launch: ``python -I -S …/ai_memory/agent_entry.py hook|mcp-bridge …``.

The installed hook and bridge command lines run this file directly with the
interpreter's ``-I -S``: no site processing, no ``.pth`` imports, no
console-script shim and none of the CLI, so a run starts almost as fast as a
bare interpreter. Without ``site`` the package is not on ``sys.path``: the
folder that holds ``ai_memory`` is appended after the standard library, so no
installed package can shadow a standard module. Standard library only.
"""

from __future__ import annotations

import sys
import time

VERBS = ("hook", "mcp-bridge")


def command(verb: str) -> list[str]:
    """The argv prefix an agent config runs for ``verb``: this interpreter, isolated, this file."""
    import os

    return [sys.executable, "-I", "-S", os.path.abspath(__file__), verb]


def main(argv: list[str], started: float) -> int:
    verb = argv[0] if argv else ""
    if verb == "hook":
        from ai_memory.hookclient.main import run

        return run(argv[1:], started=started)
    if verb == "mcp-bridge":
        from ai_memory.mcp.bridge import run as run_bridge

        return run_bridge(argv[1:])
    sys.stderr.write(f"usage: {sys.argv[0]} {{{'|'.join(VERBS)}}} [options]\n")
    return 1


if __name__ == "__main__":
    _started = time.monotonic()  # the hook's time budget counts from here, not after imports
    if __package__ in (None, ""):
        _root = __file__.rpartition("/ai_memory/")[0]
        if _root and _root not in sys.path:
            sys.path.append(_root)
    sys.exit(main(sys.argv[1:], _started))
