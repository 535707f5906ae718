"""Lists of ids for ``IN (...)`` in a few lengths, so that their statements stay prepared.

A statement is prepared once per distinct text, and a connection keeps the last 128
it prepared. A search's lists of ids come in every length from 1 to about 60, each
length its own text; together they crowded each other out, and preparing a long
statement again cost more than running it. Padded to the next power of two by
repeating the last id, each list takes one of a few texts; a repeated id changes
no ``IN``'s answer (a ``VALUES`` list repeats a row, which its reader dedups).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def padded(values: Sequence[T]) -> list[T]:
    """``values`` with the last one repeated up to the next power of two."""
    out = list(values)
    size = 1 << max(len(out) - 1, 0).bit_length()
    return out + out[-1:] * (size - len(out))


def marks(count: int) -> str:
    """``count`` parameter marks for an ``IN`` list."""
    return (",?" * count)[1:]
