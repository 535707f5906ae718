"""``ai-memory init``: lay out a data dir. Running it again changes nothing."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ai_memory.config import Config, render_default_config
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import migrate
from ai_memory.wiki.git import init_repository


def initialise(config: Config) -> list[str]:
    """Create what is missing; return a line for each thing created (empty: nothing to do)."""
    created: list[str] = []
    root = config.data_dir
    for directory in (
        root,
        config.wiki_dir,
        config.db_path.parent,
        config.spool_dir,
        config.logs_dir,
        config.backups_dir,
    ):
        if not directory.exists():
            directory.mkdir(parents=True, mode=0o700)
            created.append(f"directory {directory}")
    if not config.config_file.exists():
        config.config_file.write_text(render_default_config(), encoding="utf-8")
        created.append(f"config {config.config_file}")
    if ensure_token(config.token_file):
        created.append(f"token {config.token_file}")
    if init_repository(config.wiki_dir, config.wiki.git_author, config.wiki.git_email):
        created.append(f"wiki repository {config.wiki_dir}")
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
    token_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(token_file.parent, 0o700)
    if token_file.exists():
        return False
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32) + "\n")
    return True


def read_token(token_file: Path) -> str | None:
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return token or None
