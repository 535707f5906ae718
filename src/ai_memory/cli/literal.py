"""Text a terminal shows as it is: control characters written out, without Rich.

What the CLI prints is often page or captured text; :func:`visible` makes a string
harmless to print (no terminal escapes, carriage returns or bidi overrides acting
on the terminal). It lives apart from the Rich consoles so that a command which
prints plain lines does not load Rich for it.
"""

from __future__ import annotations

import re

# C0 and C1 controls but tab and newline (and a carriage return ending a line), and
# the bidi controls that reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def visible(text: str) -> str:
    """``text`` with every control character written out (``\\x1b``), so it prints as is."""
    return _CONTROL.sub(lambda match: _escape(match.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
