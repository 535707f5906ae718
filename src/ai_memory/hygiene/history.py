"""Removing purged pages from the wiki's git history (``purge-session --rewrite-history``).

Every commit that held one of the files is rewritten without it, then the old objects
are expired and pruned, so ``git log -p`` no longer shows the text. The commits change
identity: every clone of the wiki diverges and a push needs ``--force``.

``git-filter-repo`` does the rewrite when it is installed (a dependency of ai-memory);
otherwise ``git filter-branch``, which every git ships. Either runs as a subprocess on a
wiki no server is using: the caller holds the data dir's lock (a server running its git
checkpointer beside a rewrite could commit onto the old history).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.clock import utc_now
from ai_memory.core.errors import AiMemoryError, Unavailable
from ai_memory.hygiene.report import HygieneReport
from ai_memory.maintenance.lock import ServerLock

WARNING = (
    "the wiki's git history is rewritten: every clone of it diverges "
    "(a push needs --force, other clones must be cloned again)"
)
GIT_TIMEOUT_S = 600.0


@dataclass(slots=True)
class Rewrite:
    tool: str
    paths: list[str]
    fsck_clean: bool = False
    notes: list[str] = field(default_factory=list)


def rewrite_history(wiki_dir: Path, relpaths: list[str], *, filter_repo: bool = True) -> Rewrite:
    """Rewrite every commit of ``wiki_dir`` without ``relpaths`` (wiki-relative paths);
    ``filter_repo=False`` uses ``git filter-branch`` even when git-filter-repo is there."""
    if shutil.which("git") is None:
        raise Unavailable("rewriting history needs the git command, which is not on PATH")
    remote = _git(wiki_dir, "config", "--get", "remote.origin.url", check=False).strip()
    tool = _filter_repo_command() if filter_repo else None
    if tool is not None:
        result = Rewrite("git-filter-repo", list(relpaths))
        args = ["--force", "--invert-paths", "--quiet"]
        for path in relpaths:
            args += ["--path", path]
        _run([*tool, *args], wiki_dir)
    else:
        result = Rewrite("git filter-branch", list(relpaths))
        _filter_branch(wiki_dir, relpaths)
    if remote and not _git(wiki_dir, "remote", check=False).split():
        _git(wiki_dir, "remote", "add", "origin", remote)
        result.notes.append(f"kept the remote origin ({remote}); pushing it needs --force")
    _expire(wiki_dir)
    result.fsck_clean = (
        subprocess.run(
            ["git", "fsck", "--full", "--no-progress"],
            cwd=wiki_dir,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_S,
        ).returncode
        == 0
    )
    return result


def _filter_repo_command() -> list[str] | None:
    """The installed git-filter-repo: the script beside this interpreter, else the module."""
    script = Path(sys.executable).with_name("git-filter-repo")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    if importlib.util.find_spec("git_filter_repo") is not None:
        return [sys.executable, "-m", "git_filter_repo"]
    found = shutil.which("git-filter-repo")
    return [found] if found else None


def _filter_branch(wiki_dir: Path, relpaths: list[str]) -> None:
    removal = "git rm -q --cached --ignore-unmatch -- " + " ".join(shlex.quote(p) for p in relpaths)
    env = {**os.environ, "FILTER_BRANCH_SQUELCH_WARNING": "1"}
    _run(
        [
            "git",
            "filter-branch",
            "--force",
            "--index-filter",
            removal,
            "--prune-empty",
            "--",
            "--all",
        ],
        wiki_dir,
        env=env,
    )
    originals = _git(wiki_dir, "for-each-ref", "--format=%(refname)", "refs/original/")
    for ref in originals.split():
        _git(wiki_dir, "update-ref", "-d", ref)


def _expire(wiki_dir: Path) -> None:
    """Drop what still reaches the old commits (reflogs) and the objects themselves."""
    _git(wiki_dir, "reflog", "expire", "--expire=now", "--all")
    _git(wiki_dir, "gc", "--prune=now", "--quiet")


def _git(wiki_dir: Path, *args: str, check: bool = True) -> str:
    return _run(["git", *args], wiki_dir, check=check)


def _run(
    command: list[str], cwd: Path, *, env: dict[str, str] | None = None, check: bool = True
) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=GIT_TIMEOUT_S,
    )
    if check and done.returncode != 0:
        raise AiMemoryError(
            f"{' '.join(command[:2])} failed in {cwd} (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-500:]}"
        )
    return done.stdout


def purge_with_history(
    config: Config,
    session_id: str,
    *,
    workspace: str | None = None,
    project: str | None = None,
    actor: str = "cli",
) -> HygieneReport:
    """``purge-session --rewrite-history``: refused while a server runs; a backup of the
    data dir first, then the purge, then the rewrite once the wiki is closed."""
    from ai_memory.hygiene.sessions import purge_session
    from ai_memory.maintenance.backup import backup
    from ai_memory.runtime import Runtime

    with ServerLock(config.data_dir, operation="rewrite the wiki's history"):
        stamp = utc_now().strftime("%Y%m%dT%H%M%S%f")
        archive = backup(config, config.backups_dir / f"pre-rewrite-{stamp}.tar.gz")
        runtime = Runtime.start(config, embed=False, search=False)
        try:
            report = purge_session(
                runtime, session_id, workspace=workspace, project=project, actor=actor
            )
        finally:
            runtime.stop()
        rewrite = rewrite_history(config.wiki_dir, [str(report.details["page"])])
    report.operation = "purge-session --rewrite-history"
    report.warnings.append(WARNING)
    report.warnings.append(f"backup taken first, still holding the purged text: {archive}")
    report.warnings.extend(rewrite.notes)
    report.details["history"] = {
        "tool": rewrite.tool,
        "paths": rewrite.paths,
        "fsck_clean": rewrite.fsck_clean,
        "backup": str(archive),
    }
    return report
