"""Spooled events captured with an earlier key: hand them to the current one, or set them aside.

The hook client notes with each spooled event the public id of the key that captured
it, and delivers it only with that key, so that nobody's events become someone else's.
After a key rotation (``ai-memory login`` with a new key) that leaves the old key's
events stranded: ``hook-drain --as-current-key`` re-labels them for the current
credential (they become its user's), ``--discard-other-keys`` sets them aside in
``spool/rejected/``. Either is an explicit choice: the client cannot know whose the
old key was.
"""

from __future__ import annotations

from pathlib import Path

from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import key_id, load


def others(data_dir: Path, token: str | None) -> list[str]:
    """The spool keys of events another credential than ``token`` captured."""
    folder = data_dir / "spool"
    mine = key_id(token)
    return [item.key for item in load(folder, spool.pending(folder)) if item.key_id != mine]


def adopt(data_dir: Path, token: str | None) -> int:
    """Label every other credential's spooled event as ``token``'s; how many."""
    folder, mine = data_dir / "spool", key_id(token)
    moved = 0
    for key in others(data_dir, token):
        entry = spool.read(folder, key)
        if entry is None:
            continue
        entry.pop("key_id", None)
        if mine is not None:
            entry["key_id"] = mine
        spool.write(folder, key, entry)
        moved += 1
    return moved


def set_aside(data_dir: Path, token: str | None) -> int:
    """Move every other credential's spooled event to ``spool/rejected/``; how many."""
    folder = data_dir / "spool"
    keys = others(data_dir, token)
    for key in keys:
        spool.reject(folder, key)
    return len(keys)
