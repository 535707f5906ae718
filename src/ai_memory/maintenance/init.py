"""``ai-memory init``: lay out a data dir. Running it again changes nothing."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from ai_memory.config import Config
from ai_memory.config_render import render_default_config
from ai_memory.maintenance.modes import FILE_MODE, private_dir, tighten_tree, write_private
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import migrate
from ai_memory.wiki.git import init_repository

log = logging.getLogger(__name__)


def initialise(config: Config) -> list[str]:
    """Create what is missing; return a line for each thing created (empty: nothing to do).

    Everything in the data dir ends up private (folders 0700, files 0600),
    including what was there before.
    """
    created: list[str] = []
    root = config.data_dir
    tightened = tighten_tree(root) if root.exists() else 0
    if tightened:
        log.warning("made %d entries under %s private (folders 0700, files 0600)", tightened, root)
    for directory in (
        root,
        config.wiki_dir,
        config.db_path.parent,
        config.spool_dir,
        config.logs_dir,
        config.backups_dir,
    ):
        if not directory.exists():
            created.append(f"directory {directory}")
        private_dir(directory)
    if not config.config_file.exists():
        write_private(config.config_file, render_default_config())
        created.append(f"config {config.config_file}")
    if ensure_token(config.token_file):
        created.append(f"token {config.token_file}")
    if init_repository(config.wiki_dir, config.wiki.git_author, config.wiki.git_email):
        created.append(f"wiki repository {config.wiki_dir}")
        tighten_tree(config.wiki_dir)  # git wrote its files under the umask
    if not config.db_path.exists():
        conn = connect_writer(config.db_path, config.store.synchronous)
        try:
            migrate(conn)
        finally:
            conn.close()
        created.append(f"database {config.db_path}")
    return created


def ensure_token(token_file: Path) -> bool:
    """Mint the root bearer token (32 random bytes, hex) in a private file."""
    private_dir(token_file.parent)
    if token_file.exists():
        os.chmod(token_file, FILE_MODE)
        return False
    write_private(token_file, secrets.token_hex(32) + "\n")
    return True


def read_token(token_file: Path) -> str | None:
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return token or None
