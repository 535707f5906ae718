"""Which project a checkout belongs to, resolved on the client from the files alone.

Standard library only: the hook client imports this on every agent event.
"""

from __future__ import annotations

from ai_memory.hookclient import fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os


MARKER = ".ai-memory.toml"
DEFAULT_WORKSPACE = "default"
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


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


def resolve_project(cwd: str | os.PathLike[str]) -> ProjectIdentity:
    """The nearest marker, else the git remote ``origin``, else the checkout's folder name."""
    return locate_checkout(cwd)[0]


def locate_checkout(
    cwd: str | os.PathLike[str],
) -> tuple[ProjectIdentity, tuple[str, str | None] | None]:
    """The project, and the nearest marker as ``(its folder, its text or None)``.

    One walk up the tree serves both: the project comes from the first marker naming
    one, else the git remote ``origin``, else the checkout's folder name; the marker is
    the nearest ``.ai-memory.toml`` at or above ``cwd`` (above the checkout too, so a
    folder of client repositories can hold one for all), whether it names a project or
    only sets a policy. Plain ``os.path`` work on strings: ``pathlib`` is slow to import.
    """
    start = fs.abspath(fs.expanduser(fs.fspath(cwd)))
    directory = start
    nearest: tuple[str, str | None] | None = None
    identity: ProjectIdentity | None = None
    while True:
        marker = fs.join(directory, MARKER)
        if (identity is None or nearest is None) and fs.isfile(marker):
            text = read_text(marker)
            nearest = nearest or (directory, text)
            found = _from_marker(text, directory) if identity is None else None
            if found is not None:
                return found, nearest
        if identity is None and fs.exists(fs.join(directory, ".git")):
            identity = _from_git(fs.join(directory, ".git"), directory)
        if identity is not None and nearest is not None:
            break
        parent = fs.dirname(directory)
        if parent == directory:
            break
        directory = parent
    if identity is None:
        name = safe_name(fs.basename(start))
        identity = ProjectIdentity(DEFAULT_WORKSPACE, name, None, start, "directory")
    return identity, nearest


def _from_git(git: str, directory: str) -> ProjectIdentity:
    remote = _origin_url(git)
    identity = normalise_remote(remote) if remote else None
    if identity:
        return ProjectIdentity(
            DEFAULT_WORKSPACE, project_name(identity), identity, directory, "git-remote"
        )
    name = safe_name(fs.basename(directory))
    return ProjectIdentity(DEFAULT_WORKSPACE, name, None, directory, "directory")


def _from_marker(text: str | None, directory: str) -> ProjectIdentity | None:
    data = marker_values(text) if text is not None else None
    if data is None:
        return None
    project = data.get("project")
    workspace = data.get("workspace") or DEFAULT_WORKSPACE
    if not isinstance(project, str) or not isinstance(workspace, str):
        return None
    return ProjectIdentity(safe_name(workspace), safe_name(project), None, directory, "marker")


def marker_values(text: str, table: str = "") -> dict[str, object] | None:
    """A marker's ``table`` ("" for the top level; None when the file is not TOML).

    ``tomllib`` (slow to import) only for an unusual file.
    """
    from ai_memory.hookclient.plain_toml import values

    plain = values(text, table)
    if plain is not None:
        return dict(plain)
    import tomllib

    try:
        data: object = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    for name in table.split(".") if table else ():
        data = data.get(name, {}) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def git_dir(dot_git: str) -> str | None:
    """The repository's common git dir; worktrees and submodules point to it through files."""
    if fs.isdir(dot_git):
        return dot_git
    text = read_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    if not fs.isabs(target):
        target = fs.realpath(fs.join(fs.dirname(dot_git), target))
    common = fs.join(target, "commondir")
    if fs.isfile(common):
        pointed = read_text(common)
        if pointed is None:
            return target
        pointed = pointed.strip()
        if fs.isabs(pointed):
            return pointed
        return fs.realpath(fs.join(target, pointed))
    return target


def _origin_url(dot_git: str) -> str | None:
    directory = git_dir(dot_git)
    if directory is None:
        return None
    text = read_text(fs.join(directory, "config"))
    if text is None:
        return None
    in_origin = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_origin = _is_origin(line)
        elif in_origin and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "url":
                return value.strip().strip('"') or None
    return None


def normalise_remote(url: str) -> str | None:
    """``git@github.com:acme/api.git`` and ``https://…/acme/api`` give ``github.com/acme/api``.

    Plain string work (no regular expression to compile on every hook run).
    """
    url = url.strip()
    found = _url_form(url) or _scp_form(url)
    if found is None:
        return None
    host, path = found[0].lower(), found[1].strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if path else None


def _url_form(url: str) -> tuple[str, str] | None:
    """``scheme://[user@]host[:port]/path``."""
    scheme, sep, rest = url.partition("://")
    lowered = scheme.lower()
    if not sep or not lowered[:1].isalpha() or not all(ch in _SCHEME for ch in lowered):
        return None
    authority, slash, path = rest.partition("/")
    if not slash or not path or "\n" in path:
        return None
    user, at, rest = authority.partition("@")
    for candidate in ((rest,) if at and user else ()) + (authority,):
        host, colon, port = candidate.partition(":")
        if host and (not colon or (port.isascii() and port.isdecimal())):
            return host, path
    return None


def _scp_form(url: str) -> tuple[str, str] | None:
    """``[user@]host:path``."""
    user, at, rest = url.partition("@")
    for candidate in ((rest,) if at and user and "/" not in user else ()) + (url,):
        host, colon, path = candidate.partition(":")
        if colon and host and "/" not in host and path and "\n" not in path:
            return host, path
    return None


def _is_origin(line: str) -> bool:
    """``[remote "origin"]``, with any whitespace between the two words."""
    if not (line.startswith("[remote") and line.endswith('"origin"]')):
        return False
    middle = line[len("[remote") : -len('"origin"]')]
    return bool(middle) and not middle.strip()


def fold_unsafe(value: str) -> str:
    """Each run of characters outside ``A-Za-z0-9_.-`` becomes one ``-``."""
    out: list[str] = []
    folding = False
    for ch in value:
        if ch in _SAFE:
            out.append(ch)
            folding = False
        elif not folding:
            out.append("-")
            folding = True
    return "".join(out)


def project_name(identity: str) -> str:
    """The project is named from the remote's path without its host: ``acme-api``."""
    _, _, path = identity.partition("/")
    return safe_name(path.replace("/", "-"))


def safe_name(value: str) -> str:
    cleaned = fold_unsafe(value).strip("-.")[:64].strip("-.")
    return cleaned or "default-project"
