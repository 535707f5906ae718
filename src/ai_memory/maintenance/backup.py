"""Backup (safe while the server runs) and restore (refused while it runs)."""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import tarfile
import tempfile
from pathlib import Path
from typing import BinaryIO

from ai_memory.config import Config
from ai_memory.core.clock import utc_now
from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.maintenance.lock import ServerLock
from ai_memory.maintenance.modes import DIR_MODE, FILE_MODE, tighten_tree

DB_MEMBER = "db/memory.sqlite"
WIKI_MEMBER = "wiki"
CONFIG_MEMBER = "config.toml"


def backup(config: Config, target: Path) -> Path:
    """A tar.gz of the database (SQLite online backup) and the wiki with its git history.

    The database copy is consistent on its own; the wiki is the source of truth,
    and any drift between the two is reconciled when the restored data dir starts.
    The archive holds everything agents captured, so it is 0600 (a folder made for
    it, 0700), whatever the umask.
    """
    if not config.db_path.exists():
        raise NotFound(f"no database at {config.db_path}; nothing to back up")
    target = target.expanduser().absolute()
    target.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    with tempfile.TemporaryDirectory(dir=config.data_dir) as scratch:
        copy = Path(scratch) / "memory.sqlite"
        source = sqlite3.connect(f"file:{config.db_path}?mode=ro", uri=True)
        dest = sqlite3.connect(copy)
        try:
            source.backup(dest)
        finally:
            dest.close()
            source.close()
        partial = target.with_name(f".{target.name}.partial")
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(handle.fileno(), FILE_MODE)
                _write_archive(config, copy, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def _write_archive(config: Config, db_copy: Path, out: BinaryIO) -> None:
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        archive.add(db_copy, arcname=DB_MEMBER)
        archive.add(config.wiki_dir, arcname=WIKI_MEMBER)
        if config.config_file.exists():
            archive.add(config.config_file, arcname=CONFIG_MEMBER)
        stamp = f"ai-memory backup {utc_now().isoformat()}\n".encode()
        info = tarfile.TarInfo("BACKUP")
        info.size = len(stamp)
        archive.addfile(info, io.BytesIO(stamp))


def restore(config: Config, source: Path) -> Path:
    """Replace the database, the wiki and the config with a backup's; the old ones are
    kept aside. The server lock is held throughout, so no server starts mid-restore."""
    source = source.expanduser().absolute()
    if not source.is_file():
        raise NotFound(f"no backup file at {source}")
    with (
        ServerLock(config.data_dir, operation="restore"),
        tempfile.TemporaryDirectory(dir=config.data_dir) as scratch,
    ):
        staging = Path(scratch)
        try:
            with tarfile.open(source, "r:*") as archive:
                archive.extractall(staging, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise InvalidInput(f"{source} is not a readable backup: {exc}") from exc
        if not (staging / DB_MEMBER).is_file() or not (staging / WIKI_MEMBER / ".git").is_dir():
            raise InvalidInput(f"{source} is not an ai-memory backup (no database or wiki)")
        aside = config.backups_dir / f"pre-restore-{utc_now().strftime('%Y%m%dT%H%M%S%f')}"
        aside.mkdir(parents=True, mode=DIR_MODE)
        names = ["db", WIKI_MEMBER]
        if (staging / CONFIG_MEMBER).is_file():
            names.append(CONFIG_MEMBER)
        (staging / "db" / "memory.sqlite").parent.mkdir(exist_ok=True)
        _swap(config.data_dir, staging, aside, names)
        for name in names:  # a backup's members carry the modes of where they came from
            tighten_tree(config.data_dir / name)
    return aside


def _swap(data_dir: Path, staging: Path, aside: Path, names: list[str]) -> None:
    """Move the current entries aside and the staged ones in; undo on any failure."""
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for name in names:
            if (data_dir / name).exists():
                shutil.move(data_dir / name, aside / name)
                moved_aside.append(name)
        for name in names:
            shutil.move(staging / name, data_dir / name)
            moved_in.append(name)
    except BaseException:
        for name in moved_in:
            shutil.move(data_dir / name, staging / name)
        for name in moved_aside:
            shutil.move(aside / name, data_dir / name)
        raise
