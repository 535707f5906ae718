from __future__ import annotations

from pathlib import Path

import pytest

from ai_memory.core.errors import InvalidIdentity, InvalidPath
from ai_memory.core.identity import Scope, validate_name
from ai_memory.core.paths import (
    MAX_NAME_BYTES,
    MAX_SEGMENT_BYTES,
    TEMP_PREFIX,
    TEMP_TOKEN_HEX,
    validate_page_path,
)
from ai_memory.store.files import FileStage, atomic_write


@pytest.mark.parametrize(
    "path", ["index.md", "decisions/db.md", "_rules/style.md", "a/b/c/d-e_f.g.md", "sessions/x.md"]
)
def test_valid_paths(path: str) -> None:
    assert validate_page_path(path) == path


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../x.md", "climbs out"),
        ("a/../../x.md", "climbs out"),
        ("/etc/passwd", "absolute"),
        (".git/config", "hidden"),
        ("a/.obsidian/x.md", "hidden"),
        ("a.txt", "must name a markdown"),
        (".md", "hidden"),
        ("", "empty"),
        ("a//b.md", "empty segment"),
        ("a\\b.md", "forbidden"),
        ("a\x00.md", "control"),
        ("x" * 300 + ".md", "limit"),
        ("C:/x.md", "absolute"),
    ],
)
def test_invalid_paths_say_why(path: str, reason: str) -> None:
    with pytest.raises(InvalidPath, match=reason):
        validate_page_path(path)


def test_scope_names_are_validated() -> None:
    assert Scope.of(None, "acme-api").workspace == "default"
    for bad in ("", "../x", "a/b", ".hidden", "x" * 65):
        with pytest.raises(InvalidIdentity):
            Scope.of(None, bad)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("😀" * 60 + ".md", "243 bytes long in UTF-8; the limit is 241"),
        ("a" * 239 + ".md", "242 bytes"),
        ("/".join(["d" * 200] * 3) + ".md", "605 bytes long in UTF-8; the limit is 512"),
        ("\uff0egit/x.md", "hidden"),
        ("a/\u2024\u2024/x.md", "hidden"),
        ("a\ud800.md", r"lone surrogate U\+D800"),
        ("a\n.md", "control"),
    ],
)
def test_limits_are_in_utf8_bytes_and_look_alikes_are_refused(path: str, reason: str) -> None:
    with pytest.raises(InvalidPath, match=reason):
        validate_page_path(path)


def test_the_longest_segment_still_leaves_room_for_the_temp_file() -> None:
    name = "é" * 119 + ".md"
    assert len(name.encode()) == MAX_SEGMENT_BYTES == 241
    assert validate_page_path(name) == name
    temp = f"{TEMP_PREFIX}{name}.{'0' * TEMP_TOKEN_HEX}"
    assert len(temp.encode()) == MAX_NAME_BYTES


def test_the_writer_refuses_a_name_the_filesystem_cannot_hold(tmp_path: Path) -> None:
    target = tmp_path / ("é" * 120 + ".md")
    with pytest.raises(InvalidPath, match="too long"):
        atomic_write(target, b"x")
    assert list(tmp_path.iterdir()) == []
    stage = FileStage(sync_threads=1)
    try:
        with pytest.raises(InvalidPath):
            stage.write(target, b"x")
    finally:
        stage.close()


@pytest.mark.parametrize("name", ["proj\n", "ws\n", "a\r", " a", "a\x00", "é"])
def test_names_must_match_whole(name: str) -> None:
    with pytest.raises(InvalidIdentity):
        validate_name(name, "project")
