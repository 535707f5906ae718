"""Private file modes in the data dir: folders 0700, files 0600, whatever the umask.

The data dir holds the token, the config and everything agents captured, so
nobody but its owner may read any of it. Files are created with these modes
(``os.open`` with a mode, then ``chmod`` because the umask can only narrow);
``init`` also tightens a data dir that an older version or a copy left open.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ai_memory.config import Config

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_umask() -> None:
    """Files this process creates without an explicit mode (git's, SQLite's) stay private too.

    For the commands that own the data dir for their run (serve, init, reindex,
    backup, restore); never for commands that edit an agent's own files.
    """
    os.umask(0o077)


def private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) and make it 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(path, DIR_MODE)


def private_file(path: Path) -> None:
    """Create ``path`` empty if missing, and make it 0600 either way."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write a new file ``path`` holding ``text``, 0600 from its first byte."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), FILE_MODE)
        handle.write(text)


def tighten_tree(root: Path) -> int:
    """Make every folder under ``root`` 0700 and every file 0600; return how many changed.

    Only the group and other bits go: a file its owner may execute keeps that
    (0700), a read-only one stays read-only (git's objects: 0400). Symlinks are
    neither followed nor changed.
    """
    changed = _tighten(root)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            changed += _tighten(Path(folder) / name)
    return changed


def secure_layout(config: Config) -> int:
    """Tighten the data dir's own folders and known files (no walk: cheap at each start)."""
    changed = 0
    for folder in (
        config.data_dir,
        config.wiki_dir,
        config.db_path.parent,
        config.token_file.parent,
        config.spool_dir,
        config.logs_dir,
        config.backups_dir,
    ):
        changed += _tighten(folder)
    db = config.db_path
    for file in (
        config.config_file,
        config.token_file,
        db,
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
    ):
        changed += _tighten(file)
    return changed


def _tighten(path: Path) -> int:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return 0
    if stat.S_ISLNK(info.st_mode):
        return 0
    current = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        wanted = DIR_MODE
    else:
        # Owner bits kept as they are (read-only git objects stay read-only), others gone.
        wanted = (current & 0o700) | FILE_MODE if current & 0o200 else current & 0o500
    if current == wanted:
        return 0
    os.chmod(path, wanted)
    return 1
