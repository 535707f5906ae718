from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.core.errors import ConfigError, NotInitialised
from ai_memory.hookclient.resolve import (
    fold_unsafe,
    normalise_remote,
    project_name,
    resolve_project,
)
from ai_memory.server import parse_bind, require_token


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("git@github.com:acme/api.git", "github.com/acme/api"),
        ("https://github.com/acme/api", "github.com/acme/api"),
        ("https://user:pw@GitHub.com/acme/api.git/", "github.com/acme/api"),
        ("ssh://git@gitlab.example.com:2222/group/sub/api.git", "gitlab.example.com/group/sub/api"),
    ],
)
def test_remotes_normalise_to_a_hostful_identity(url: str, identity: str) -> None:
    assert normalise_remote(url) == identity


def test_project_name_drops_the_host() -> None:
    assert project_name("github.com/acme/api") == "acme-api"
    assert project_name("gitlab.example.com/group/sub/api") == "group-sub-api"


def make_repo(root: Path, remote: str | None) -> Path:
    (root / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if remote:
        config += f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*\n'
    (root / ".git/config").write_text(config)
    return root


def test_checkout_subdirectories_worktrees_and_markers(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "api", "git@github.com:acme/api.git")
    (main / "src/deep").mkdir(parents=True)
    assert resolve_project(main / "src/deep").project == "acme-api"
    # A worktree's .git is a file pointing into the main repository's git dir.
    worktree_git = main / ".git/worktrees/feature"
    worktree_git.mkdir(parents=True)
    (worktree_git / "commondir").write_text("../..\n")
    worktree = tmp_path / "feature"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {worktree_git}\n")
    identity = resolve_project(worktree)
    assert (identity.project, identity.remote) == ("acme-api", "github.com/acme/api")
    # Another repository also called `api` is another project.
    other = make_repo(tmp_path / "other/api", "https://gitlab.com/beta/api")
    assert resolve_project(other).project == "beta-api"
    # No remote: the directory name.
    assert resolve_project(make_repo(tmp_path / "solo", None)).project == "solo"
    # A marker wins over the remote.
    (main / "src/.ai-memory.toml").write_text('workspace = "team"\nproject = "core"\n')
    marked = resolve_project(main / "src/deep")
    assert (marked.workspace, marked.project, marked.source) == ("team", "core", "marker")


def test_bind_checks() -> None:
    assert parse_bind("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_bind("[::1]:9") == ("::1", 9)
    with pytest.raises(ConfigError):
        parse_bind("nope")
    assert require_token("t", Path("x")) == "t"
    for missing in (None, ""):
        with pytest.raises(NotInitialised, match="ai-memory init"):
            require_token(missing, Path("x"))


# The regular expressions the string parsing replaced, as the reference it must agree with.
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)$", re.I)
_SCP_RE = re.compile(r"^(?:[^@/]+@)?([^/:]+):(.+)$")


def _by_regex(url: str) -> str | None:
    url = url.strip()
    match = _URL_RE.match(url) or _SCP_RE.match(url)
    if not match:
        return None
    path = match.group(2).strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return f"{match.group(1).lower()}/{path}" if path else None


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ghtps:/@.-_1209Ab\n é", max_size=40))
def test_remote_parsing_agrees_with_the_regular_expressions(url: str) -> None:
    assert normalise_remote(url) == _by_regex(url)


@given(st.text(max_size=30))
def test_folding_unsafe_characters_agrees_with_the_regular_expression(value: str) -> None:
    assert fold_unsafe(value) == re.sub(r"[^A-Za-z0-9_.-]+", "-", value)
