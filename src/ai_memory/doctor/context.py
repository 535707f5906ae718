"""What every check reads: the data dir, its config, the home dir holding agent configs.

The home dir and the environment are passed in, so tests point them at a temporary
HOME instead of the real one; the HTTP client is built here once and closed once.
"""

from __future__ import annotations

import shlex
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ai_memory import locate
from ai_memory.config import Config
from ai_memory.core.errors import AiMemoryError
from ai_memory.maintenance.init import read_token


@dataclass
class DoctorContext:
    data_dir: Path
    home: Path
    env: Mapping[str, str]
    timeout_s: float = 3.0
    config: Config | None = None
    config_error: str | None = None
    status: dict[str, Any] | None = None  # /admin/status, once the server answered
    signed_in: tuple[str, str] | None = None  # (server, key) the hook client uses after login
    _http: httpx.Client | None = field(default=None, repr=False)

    @classmethod
    def load(
        cls, data_dir: Path | None, home: Path, env: Mapping[str, str], timeout_s: float = 3.0
    ) -> DoctorContext:
        signed_in = _signed_in(data_dir, env)
        try:
            config = Config.load(data_dir, env)
        except AiMemoryError as exc:
            root = locate.data_dir(data_dir, env)
            return cls(root, home, env, timeout_s, None, exc.message, signed_in=signed_in)
        return cls(config.data_dir, home, env, timeout_s, config, signed_in=signed_in)

    @property
    def dir_arg(self) -> str:
        """``--data-dir <dir>``, quoted, for the fix commands."""
        return f"--data-dir {shlex.quote(str(self.data_dir))}"

    @property
    def token(self) -> str | None:
        if self.signed_in is not None:
            return self.signed_in[1]
        return read_token(self.data_dir / "auth-tokens" / "default")

    @property
    def server_url(self) -> str | None:
        if self.signed_in is not None:
            return self.signed_in[0].rstrip("/")
        return self.config.server.url.rstrip("/") if self.config else None

    def http(self) -> httpx.Client:
        if self._http is None:
            token = self.token
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            url = self.server_url or ""
            self._http = httpx.Client(
                base_url=url,
                headers=headers,
                timeout=self.timeout_s,
                verify=url.lower().startswith("https://"),  # no CA bundle load for http
            )
        return self._http

    def database(self) -> closing[sqlite3.Connection]:
        """A read-only connection: the doctor never writes the index."""
        assert self.config is not None
        uri = f"file:{self.config.db_path}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=2)
        conn.row_factory = sqlite3.Row
        return closing(conn)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


def _signed_in(data_dir: Path | None, env: Mapping[str, str]) -> tuple[str, str] | None:
    """The server and key the hook client sends once ``ai-memory login`` stored a credential.

    An explicit ``--data-dir`` asks about that data dir, so it is checked as before.
    """
    if data_dir is not None or locate.credential(env) is None:
        return None
    root = locate.data_folder(None, env)
    key = locate.token(root, env)
    return (locate.server_url(None, root, env), key) if key else None
