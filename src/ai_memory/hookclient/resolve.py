"""Which project a checkout belongs to, resolved on the client from the files alone.

Standard library only: the hook client imports this on every agent event.
"""

from __future__ import annotations

import re
from pathlib import Path

MARKER = ".ai-memory.toml"
DEFAULT_WORKSPACE = "default"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class ProjectIdentity:
    """A plain value class: ``dataclasses`` costs the hook client milliseconds to import."""

    __slots__ = ("project", "remote", "root", "source", "workspace")

    def __init__(
        self, workspace: str, project: str, remote: str | None, root: str, source: str
    ) -> None:
        self.workspace = workspace
        self.project = project
        self.remote = remote
        self.root = root
        self.source = source  # "marker", "git-remote", "directory"

    def _key(self) -> tuple[str, str, str | None, str, str]:
        return (self.workspace, self.project, self.remote, self.root, self.source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectIdentity) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "ProjectIdentity({!r}, {!r}, {!r}, {!r}, {!r})".format(*self._key())


def resolve_project(cwd: str | Path) -> ProjectIdentity:
    start = Path(cwd).expanduser().absolute()
    for directory in (start, *start.parents):
        marker = directory / MARKER
        if marker.is_file():
            found = _from_marker(marker, directory)
            if found is not None:
                return found
        git = directory / ".git"
        if git.exists():
            remote = _origin_url(git)
            if remote:
                identity = normalise_remote(remote)
                if identity:
                    return ProjectIdentity(
                        DEFAULT_WORKSPACE,
                        project_name(identity),
                        identity,
                        str(directory),
                        "git-remote",
                    )
            return ProjectIdentity(
                DEFAULT_WORKSPACE, safe_name(directory.name), None, str(directory), "directory"
            )
    return ProjectIdentity(DEFAULT_WORKSPACE, safe_name(start.name), None, str(start), "directory")


def _from_marker(marker: Path, directory: Path) -> ProjectIdentity | None:
    import tomllib  # only when a marker exists: it is slow to import on every hook run

    try:
        data = tomllib.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    workspace = data.get("workspace") or DEFAULT_WORKSPACE
    if not isinstance(project, str) or not isinstance(workspace, str):
        return None
    return ProjectIdentity(safe_name(workspace), safe_name(project), None, str(directory), "marker")


def git_dir(dot_git: Path) -> Path | None:
    """The repository's common git dir; worktrees and submodules point to it through files."""
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = (dot_git.parent / target).resolve()
    common = target / "commondir"
    if common.is_file():
        try:
            pointed = Path(common.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            return target
        return pointed if pointed.is_absolute() else (target / pointed).resolve()
    return target


def _origin_url(dot_git: Path) -> str | None:
    directory = git_dir(dot_git)
    if directory is None:
        return None
    try:
        lines = (directory / "config").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    in_origin = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            in_origin = re.fullmatch(r'\[remote\s+"origin"\]', line) is not None
        elif in_origin and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "url":
                return value.strip().strip('"') or None
    return None


def normalise_remote(url: str) -> str | None:
    """``git@github.com:acme/api.git`` and ``https://…/acme/api`` give ``github.com/acme/api``."""
    url = url.strip()
    match = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)$", url, re.I)
    if not match:
        match = re.match(r"^(?:[^@/]+@)?([^/:]+):(.+)$", url)
    if not match:
        return None
    host, path = match.group(1).lower(), match.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if path else None


def project_name(identity: str) -> str:
    """The project is named from the remote's path without its host: ``acme-api``."""
    _, _, path = identity.partition("/")
    return safe_name(path.replace("/", "-"))


def safe_name(value: str) -> str:
    cleaned = _UNSAFE.sub("-", value).strip("-.")[:64].strip("-.")
    return cleaned or "default-project"
