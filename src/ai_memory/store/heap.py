"""Handing memory a large one-off pass freed back to the operating system.

The start-up check holds every page's path and hash at once; once it is done
that memory is free inside the process but still resident, which on a large
wiki is most of the server's RSS. A full collection frees what cycles hold,
and glibc's ``malloc_trim`` returns the free parts of its heap (elsewhere it is
absent and this does only the collection). The C library is the one the process
already links (``dlopen(NULL)``): ``ctypes.util.find_library`` would spawn
``ldconfig`` for it, tens of milliseconds at every start.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc


def release_heap() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def trim_heap() -> None:
    """``malloc_trim`` alone, for a thread that has just freed a large C structure
    (libgit2's index of every page), without a full collection's cost."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
