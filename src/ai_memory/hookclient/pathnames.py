"""The file paths an agent's tool event names, found without a regular expression.

Read, Write, Edit, MultiEdit, NotebookEdit, Glob and Grep name theirs in the
tool input (``file_path``, ``path``, ``notebook_path``, ``pattern``…); Codex's
``apply_patch`` in its patch headers (``*** Update File: src/a.py``); Cursor's
file events at the top of the payload. With ``shell``, the words of a shell
command count too (``cat secrets/a.env``, split at quotes, ``;``, ``|``, ``=``…),
so an exclude glob also catches a command that reads the file; a false match
only drops an event, and so does a command too long to check whole.

Standard library only: imported on every agent event.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` is slow to import: annotations only
    from collections.abc import Mapping

INPUT_KEYS = ("tool_input", "toolInput", "tool_args", "args", "arguments", "input")
PATH_KEYS = (
    "file_path",
    "filePath",
    "path",
    "notebook_path",
    "notebookPath",
    "absolute_path",
    "dir_path",
    "directory",
    "target_file",
    "old_path",
    "new_path",
)
LIST_KEYS = ("paths", "files", "file_paths")
PATCH_KEYS = ("command", "patch", "input", "cmd")
PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
GLOB_TOOLS = frozenset({"glob", "find_files", "list_directory"})
MAX_PATHS = 256
MAX_WORDS = 1024
MAX_TEXT = 65536
# What separates a path from the words around it in a shell command.
_SHELL_BREAKS = str.maketrans(dict.fromkeys("\"'`()<>;|&=", " "))
_TOO_LONG = "\x00"  # in ``found``: a text was cut (no path holds a NUL)


def file_paths(payload: Mapping[str, object], *, shell: bool) -> list[str] | None:
    """Every path the event names, in order, without repeats (at most :data:`MAX_PATHS`).

    With ``shell`` nothing is cut: None when there are more than :data:`MAX_WORDS`
    words or :data:`MAX_TEXT` characters to check, so the caller can drop the event.
    """
    found: dict[str, None] = {}
    _from_mapping(payload, found, shell=False, glob=False)
    tool = payload.get("tool_name") or payload.get("toolName") or payload.get("tool")
    glob = isinstance(tool, str) and tool.casefold() in GLOB_TOOLS
    for key in INPUT_KEYS:
        value = payload.get(key)
        if isinstance(value, dict):
            _from_mapping(value, found, shell=shell, glob=glob)
        elif isinstance(value, str) and key != "input":
            _from_text(value, found, shell=shell)
    if shell:
        return None if _TOO_LONG in found or len(found) > MAX_WORDS else list(found)
    found.pop(_TOO_LONG, None)
    return list(found)[:MAX_PATHS]


def _from_mapping(
    values: Mapping[str, object], found: dict[str, None], *, shell: bool, glob: bool
) -> None:
    for key in PATH_KEYS + (("pattern",) if glob else ()):
        _add(found, values.get(key))
    for key in LIST_KEYS:
        items = values.get(key)
        if isinstance(items, list):
            if len(items) > MAX_PATHS:
                found[_TOO_LONG] = None
            for item in items[:MAX_PATHS]:
                _add(found, item)
    for key in PATCH_KEYS:
        value = values.get(key)
        if isinstance(value, list):
            value = "\n".join(str(part) for part in value[:MAX_PATHS])
        if isinstance(value, str):
            _from_text(value, found, shell=shell)


def _from_text(text: str, found: dict[str, None], *, shell: bool) -> None:
    """Patch headers (all of them); with ``shell``, every word of a command too.

    A patch's body is the new text of its files, not a command: only its headers count.
    """
    if "*** " in text:
        for line in text.splitlines():
            for header in PATCH_HEADERS:
                if line.startswith(header):
                    _add(found, line[len(header) :])
    if shell:
        head, begin, rest = text.partition("*** Begin Patch")
        command = head + rest.partition("*** End Patch")[2] if begin else text
        if len(command) > MAX_TEXT:
            found[_TOO_LONG] = None
        for word in command[:MAX_TEXT].translate(_SHELL_BREAKS).split():
            _add(found, word)


def _add(found: dict[str, None], value: object) -> None:
    if isinstance(value, str) and len(found) <= MAX_WORDS:
        path = value.strip()
        if path and len(path) <= 4096 and "\x00" not in path:
            found.setdefault(path, None)
