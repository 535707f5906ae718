"""Where every command prints: one stdout console, one stderr console, one JSON form.

Much of what the CLI prints is page or captured text, so the consoles print every
string literally: no Rich markup (``[bold]``, ``[link=…]``), no ``:emoji:`` codes,
and control characters (terminal escapes, carriage returns, bidi overrides) shown
as ``\\x1b``-style escapes instead of acting on the terminal. Style comes only from
:func:`styled` and ``style=``, never from the text.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rich.console import Console, HighlighterType, JustifyMethod, OverflowMethod
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ai_memory.cli.literal import visible

__all__ = ["emit_json", "err", "keep_whole", "out", "styled", "visible", "write_text"]

# What JSON may carry raw but a terminal could act on: written as \\u escapes instead.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def styled(text: str, style: str) -> Text:
    """``text`` in ``style``, printed literally."""
    return Text(visible(text), style=style)


class LiteralConsole(Console):
    """A console that turns every string into literal text: markup, emoji codes and
    highlighting never apply, so no stored text can style itself or make a link."""

    def render_str(
        self,
        text: str,
        *,
        style: str | Style = "",
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        emoji: bool | None = None,
        markup: bool | None = None,
        highlight: bool | None = None,
        highlighter: HighlighterType | None = None,
    ) -> Text:
        return Text(visible(text), style=style, justify=justify, overflow=overflow)


out = LiteralConsole(markup=False, emoji=False, highlight=False)
err = LiteralConsole(stderr=True, soft_wrap=True, markup=False, emoji=False, highlight=False)


def write_text(text: str) -> None:
    """A page body to stdout as it is; on a terminal, control characters written out."""
    shown = visible(text) if out.is_terminal else text
    sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")


def emit_json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False)
    sys.stdout.write(_JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n")


def keep_whole(table: Table, *names: str) -> Table:
    """Columns ``names`` (paths, commands) are never wrapped or cut: each is as wide as its
    longest cell; the other columns wrap (fold) into what is left of the terminal."""
    for column in table.columns:
        if str(column.header) in names:
            cells = [len(str(cell)) for cell in column.cells]
            column.no_wrap = True
            column.min_width = max([len(str(column.header)), *cells])
        else:
            column.overflow = "fold"
    return table
