from __future__ import annotations

import pytest

from ai_memory.core.errors import InvalidIdentity, InvalidPath
from ai_memory.core.identity import Scope
from ai_memory.core.paths import validate_page_path


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
