"""The hook client's ``posix`` path functions answer exactly as ``os.path`` does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.hookclient import fs

PATHS = [
    "",
    ".",
    "..",
    "/",
    "//",
    "///",
    "//a/b",
    "///a//b/",
    "a",
    "a/",
    "a//b",
    "a/./b/../c",
    "../../x",
    "/../x",
    "/a/b/../../..",
    "a/b/c/../../../..",
    "./a/./",
    "/usr/lib/",
    "~",
    "~/",
    "~/x/y",
    "~root/x",
    "~no-such-user-here/x",
    "x~/y",
    "é/ü",
]


@pytest.mark.parametrize("path", PATHS)
def test_path_functions_match_os_path(path: str) -> None:
    assert fs.split(path) == os.path.split(path)
    assert fs.dirname(path) == os.path.dirname(path)
    assert fs.basename(path) == os.path.basename(path)
    assert fs.isabs(path) == os.path.isabs(path)
    assert fs.normpath(path) == os.path.normpath(path)
    assert fs.abspath(path) == os.path.abspath(path)
    assert fs.expanduser(path) == os.path.expanduser(path)
    assert fs.realpath(path) == os.path.realpath(path)


def test_join_matches_os_path() -> None:
    cases = [("a",), ("a", "b"), ("a/", "b"), ("", "b"), ("a", "/b", "c"), ("a", ""), ("/", "x")]
    for parts in cases:
        assert fs.join(*parts) == os.path.join(*parts)
    assert fs.join(Path("/tmp"), "x") == "/tmp/x"


def test_expanduser_without_home_asks_the_password_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HOME", raising=False)
    assert fs.expanduser("~/x") == os.path.expanduser("~/x")
    assert not fs.expanduser("~/x").startswith("~")


def test_realpath_follows_links_as_os_path_does(tmp_path: Path) -> None:
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "rel").symlink_to("real/deep")
    (tmp_path / "up").symlink_to("real/../real/./deep/..")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "dangling").symlink_to("nowhere/at/all")
    names = ["link", "link/deep", "rel", "rel/..", "up", "loop1", "loop1/x", "dangling/y", "none"]
    for name in names:
        assert fs.realpath(tmp_path / name) == os.path.realpath(tmp_path / name), name
    assert fs.realpath(tmp_path / "link/deep") == str(tmp_path.resolve() / "real" / "deep")


def test_file_tests_and_makedirs(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    fs.makedirs(target, mode=0o700, exist_ok=True)
    fs.makedirs(target, exist_ok=True)
    assert fs.isdir(target) and not fs.isfile(target) and fs.exists(target)
    assert target.stat().st_mode & 0o777 == 0o700
    with pytest.raises(FileExistsError):
        fs.makedirs(target)
    (target / "f").write_text("x")
    assert fs.isfile(target / "f") and not fs.isdir(target / "f")
    assert not fs.exists(tmp_path / "missing") and not fs.exists("bad\0path")
    with pytest.raises(FileExistsError):
        fs.makedirs(target / "f", exist_ok=True)  # a file is in the way


def test_environ_is_the_live_one_once_os_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_MEMORY_FS_PROBE", "live")
    assert fs.environ().get("AI_MEMORY_FS_PROBE") == "live"


def test_the_hook_command_never_imports_os(tmp_path: Path) -> None:
    """What a hook run imports, in a fresh isolated interpreter: ``os`` costs ~1.4 ms."""
    src = Path(fs.__file__).resolve().parents[2]
    probe = (
        "import sys; sys.path.append(sys.argv[1]);"
        "from ai_memory.hookclient.main import run;"
        "run(['--agent', 'generic', '--data-dir', sys.argv[2], '--server', 'http://127.0.0.1:9']);"
        "print(sorted(m for m in ('os', 'posixpath', 'pathlib', 're', 'json') if m in sys.modules))"
    )
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}

    def hook_run() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-I", "-S", "-c", probe, str(src), str(tmp_path / "data")],
            input=b'{"hook_event_name": "Stop", "cwd": "' + str(tmp_path).encode() + b'"}',
            capture_output=True,
            env=env,
            timeout=60,
        )

    # The first run in a fresh checkout may fill the compiled-pattern cache with ``re``
    # (as the first import fills ``__pycache__``); every run after it is the steady state.
    assert hook_run().returncode == 0
    done = hook_run()
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == ["{}", "[]"]
    assert len(list((tmp_path / "data" / "spool").glob("*.json"))) == 2
