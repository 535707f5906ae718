"""The few ``os`` and ``os.path`` calls the hook client makes, on ``posix`` directly.

Importing ``os`` runs ``_collections_abc`` and builds ``os.environ``: about 1.4 ms,
an eighth of a bare interpreter's start, on every agent event. These functions are
``posixpath``'s own for ``str`` paths (``PathLike`` ones are turned into ``str``
first), and the system calls are the ``posix`` functions ``os`` re-exports. The hook
client, like the rest of ai-memory, runs on POSIX systems only.
"""

from __future__ import annotations

import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from os import PathLike

    StrPath = str | PathLike[str]

O_WRONLY = posix.O_WRONLY
O_CREAT = posix.O_CREAT
O_TRUNC = posix.O_TRUNC
open_fd = posix.open
close = posix.close
stat = posix.stat
lstat = posix.lstat
unlink = posix.unlink
replace = posix.replace
listdir = posix.listdir
mkdir = posix.mkdir
getpid = posix.getpid
getcwd = posix.getcwd
urandom = posix.urandom
utime = posix.utime
_S_IFMT, _S_IFDIR, _S_IFREG, _S_IFLNK = 0o170000, 0o040000, 0o100000, 0o120000


def environ() -> Mapping[str, str]:
    """The process environment: ``os.environ`` once something imported ``os`` (it is the
    live one), else the interpreter's copy from start-up, decoded as ``os`` decodes it."""
    loaded = sys.modules.get("os")
    if loaded is not None:
        live: Mapping[str, str] = loaded.environ
        return live
    encoding = sys.getfilesystemencoding()
    return {
        k.decode(encoding, "surrogateescape"): v.decode(encoding, "surrogateescape")
        for k, v in posix.environ.items()
    }


def fspath(path: StrPath) -> str:
    value = posix.fspath(path)
    if not isinstance(value, str):
        raise TypeError(f"expected a str path, not {type(value).__name__}")
    return value


def join(first: StrPath, *rest: StrPath) -> str:
    path = fspath(first)
    for part in map(fspath, rest):
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def split(path: StrPath) -> tuple[str, str]:
    text = fspath(path)
    cut = text.rfind("/") + 1
    head, tail = text[:cut], text[cut:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def dirname(path: StrPath) -> str:
    return split(path)[0]


def basename(path: StrPath) -> str:
    text = fspath(path)
    return text[text.rfind("/") + 1 :]


def isabs(path: StrPath) -> bool:
    return fspath(path).startswith("/")


def _mode(path: StrPath) -> int | None:
    try:
        return posix.stat(path).st_mode & _S_IFMT
    except (OSError, ValueError):
        return None


def exists(path: StrPath) -> bool:
    return _mode(path) is not None


def isfile(path: StrPath) -> bool:
    return _mode(path) == _S_IFREG


def isdir(path: StrPath) -> bool:
    return _mode(path) == _S_IFDIR


def normpath(path: StrPath) -> str:
    text = fspath(path)
    if not text:
        return "."
    slashes = 2 if text.startswith("//") and not text.startswith("///") else 0
    slashes = slashes or (1 if text.startswith("/") else 0)
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not slashes and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    return ("/" * slashes + "/".join(parts)) or "."


def abspath(path: StrPath) -> str:
    text = fspath(path)
    return normpath(text if isabs(text) else join(posix.getcwd(), text))


def expanduser(path: StrPath) -> str:
    """``~`` and ``~user`` as ``posixpath.expanduser`` expands them."""
    text = fspath(path)
    if not text.startswith("~"):
        return text
    end = text.find("/", 1)
    end = len(text) if end < 0 else end
    home = environ().get("HOME") if end == 1 else None
    if home is None:
        import pwd

        try:
            entry = pwd.getpwuid(posix.getuid()) if end == 1 else pwd.getpwnam(text[1:end])
        except KeyError:
            return text
        home = entry.pw_dir
    return (home.rstrip("/") + text[end:]) or "/"


def realpath(path: StrPath) -> str:
    """The canonical path, symbolic links resolved, as ``os.path.realpath`` (not strict)."""
    resolved, _ = _join_real("", fspath(path), {})
    return abspath(resolved)


def _join_real(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    if rest.startswith("/"):
        rest, path = rest[1:], "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path:
                path, name = split(path)
                if name == "..":
                    path = join(path, "..", "..")
            else:
                path = ".."
            continue
        candidate = join(path, name)
        try:
            is_link = posix.lstat(candidate).st_mode & _S_IFMT == _S_IFLNK
        except OSError:
            is_link = False
        if not is_link:
            path = candidate
            continue
        if candidate in seen:
            known = seen[candidate]
            if known is not None:
                path = known
                continue
            return join(candidate, rest), False  # a loop of links
        seen[candidate] = None
        path, ok = _join_real(path, posix.readlink(candidate), seen)
        if not ok:
            return join(path, rest), False
        seen[candidate] = path
    return path, True


def makedirs(path: StrPath, mode: int = 0o777, exist_ok: bool = False) -> None:
    """``os.makedirs``: the missing parents too (they get the default mode, as there)."""
    text = fspath(path)
    head, tail = split(text)
    if not tail:
        head, tail = split(head)
    if head and tail and not exists(head):
        try:  # noqa: SIM105 (``contextlib`` is slow to import)
            makedirs(head, exist_ok=exist_ok)
        except FileExistsError:
            pass
        if tail == ".":
            return
    try:
        posix.mkdir(text, mode)
    except OSError:
        if not exist_ok or not isdir(text):
            raise
