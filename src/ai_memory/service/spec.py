"""What a service file describes, and where each platform keeps it."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Platform = Literal["linux", "macos"]

UNIT_NAME = "ai-memory.service"
LAUNCHD_LABEL = "local.ai-memory.server"


@dataclass(frozen=True, slots=True)
class Host:
    """The machine the service is installed on; every field injectable for tests."""

    platform: Platform | None  # None: no supported service manager on this OS at all
    env: Mapping[str, str]
    interpreter: Path
    uid: int

    @classmethod
    def current(cls) -> Host:
        return cls(platform_of(sys.platform), os.environ, Path(sys.executable), os.getuid())

    @property
    def home(self) -> Path:
        return Path(self.env.get("HOME") or str(Path.home()))


def platform_of(name: str) -> Platform | None:
    if name.startswith("linux"):
        return "linux"
    if name == "darwin":
        return "macos"
    return None


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """One data dir served by one interpreter: everything a rendered file names."""

    platform: Platform
    interpreter: Path
    data_dir: Path

    @property
    def config_file(self) -> Path:
        return self.data_dir / "config.toml"

    @property
    def log_file(self) -> Path:
        """launchd's stdout and stderr (systemd sends them to the journal)."""
        return self.data_dir / "logs" / "launchd.log"

    @property
    def argv(self) -> list[str]:
        """The real interpreter runs the installed package: no PATH or shell involved."""
        return [str(self.interpreter), "-m", "ai_memory", "serve", "--data-dir", str(self.data_dir)]


def unit_path(platform: Platform, env: Mapping[str, str], home: Path) -> Path:
    """``$XDG_CONFIG_HOME/systemd/user/`` on Linux, ``~/Library/LaunchAgents/`` on macOS."""
    if platform == "macos":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config_home = env.get("XDG_CONFIG_HOME", "")
    base = Path(config_home) if os.path.isabs(config_home) else home / ".config"
    return base / "systemd" / "user" / UNIT_NAME


def foreground_command(interpreter: Path, data_dir: Path) -> str:
    """The one command that serves in the foreground, where no service manager runs."""
    script = interpreter.parent / "ai-memory"
    command = [str(script)] if script.exists() else [str(interpreter), "-m", "ai_memory"]
    return shlex.join([*command, "serve", "--data-dir", str(data_dir)])
