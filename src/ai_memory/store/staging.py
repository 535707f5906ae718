"""Where a page's temp file is staged, and the checks a path gets before it is.

The temp files of a wiki's pages are staged outside the wiki, in a hidden folder
beside it on the same filesystem (:func:`staging_dir`): the file watcher then hears
of a page write once, as the rename that publishes it, rather than also of a temp
file's creation, writes and move. The rename takes the page out of that folder, so
only the page's own folder needs an fsync for it to last. A temp file staged apart
no longer fails by itself where its page cannot go, so :func:`ready_folder` checks.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ai_memory.core.errors import Conflict, InvalidPath


def staging_dir(root: Path) -> Path:
    """Where the temp files of the files beneath ``root`` are staged: a hidden folder
    beside it (the data dir's ``.wiki-staging`` for the wiki), outside what is watched."""
    return root.parent / f".{root.name}-staging"


def ready_folder(target: str) -> None:
    """For a temp file staged apart: fail as a temp file beside
    ``target`` would, and make the folder the rename puts ``target`` in."""
    try:
        if stat.S_ISDIR(os.stat(target).st_mode):
            raise folder_in_way(target)
        return
    except FileNotFoundError:
        pass  # a new file, perhaps in a new folder
    except NotADirectoryError as exc:
        raise folder_is_file(target) from exc
    except OSError as exc:
        raise_if_too_long(target, exc)
        raise
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        try:
            os.makedirs(folder, exist_ok=True)
        except (NotADirectoryError, FileExistsError) as exc:
            raise folder_is_file(target) from exc


def folder_in_way(target: str) -> Conflict:
    name = os.path.basename(target)
    return Conflict(f"cannot write {name}: a folder of that name is in the way")


def folder_is_file(target: str) -> Conflict:
    name = os.path.basename(target)
    return Conflict(f"cannot write {name}: part of its folder path is a file")


def raise_if_too_long(target: str, exc: OSError) -> None:
    if exc.errno == errno.ENAMETOOLONG:
        name = os.path.basename(target)
        raise InvalidPath(f"file path of {name[:40]!r} is too long") from exc
