"""Lint: rule-based findings about a project's pages, written to ``_lint/report.md``.

Each finding names the page and the fix. The report goes through Wiki like any
page (kind ``lint``, working tier, so it never decays), names pages in code
spans rather than links (it must not link to what it reports dangling), and
reading for it reinforces nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.maintenance import sweep
from ai_memory.maintenance.merging import merging_in_steps
from ai_memory.maintenance.similar import similar_pairs
from ai_memory.store import lint as sql
from ai_memory.store import pages
from ai_memory.wiki.wiki import Wiki

REPORT = "_lint/report.md"
MAX_LISTED = 1000  # keeps the report page well under the page size limit


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    path: str
    message: str
    fix: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path, "message": self.message, "fix": self.fix}


def _target(row: sqlite3.Row, scope: Scope) -> str:
    if (row["dst_workspace"], row["dst_project"]) == (scope.workspace, scope.project):
        return str(row["dst_path"])
    return f"{row['dst_workspace']}/{row['dst_project']}:{row['dst_path']}"


def find(conn: sqlite3.Connection, config: Config, scope: Scope, now: str) -> list[Finding]:
    """Every finding for ``scope`` at ``now``, in rule order, then path order."""
    params = {"workspace": scope.workspace, "project": scope.project, "now": now}
    out: list[Finding] = []
    for row in sql.run(conn, sql.DANGLING, params):
        target = _target(row, scope)
        out.append(
            Finding(
                "dangling-link",
                row["path"],
                f"links to `{target}`, which does not exist",
                f"write `{target}`, restore it (ai-memory restore-page), or remove the link",
            )
        )
    for row in sql.run(conn, sql.EXPIRED_LINKED, params):
        target = _target(row, scope)
        out.append(
            Finding(
                "expired-linked",
                row["path"],
                f"links to `{target}`, which has expired and goes at the next sweep",
                f"remove the link, or clear expires_at on `{target}` to keep it",
            )
        )
    for row in sql.run(conn, sql.ORPHANS, params):
        out.append(
            Finding(
                "orphan",
                row["path"],
                "no page links to it",
                "link it from index.md or a related page, or delete it",
            )
        )
    for row in sql.run(conn, sql.BROKEN_FRONTMATTER, params):
        out.append(
            Finding(
                "broken-frontmatter",
                row["path"],
                f"its frontmatter does not parse: {row['frontmatter_error']}",
                "fix the YAML between the --- lines",
            )
        )
    for row in sql.run(conn, sql.DUPLICATE_TITLES, params):
        paths = row["paths"].split("\n")
        for path in paths:
            others = ", ".join(f"`{p}`" for p in paths if p != path)
            out.append(
                Finding(
                    "duplicate-title",
                    path,
                    f"has the same title as {others}",
                    "merge the pages, or retitle one",
                )
            )
    for row in sql.run(conn, sql.FLAGGED, params):
        reason = f": {row['reason']}" if row["reason"] else ""
        out.append(
            Finding(
                f"flagged-{row['signal']}",
                row["path"],
                f"an agent marked it {row['signal']}{reason}",
                "rewrite it with what is true now (that clears the flag), or delete it",
            )
        )
    for cold in sweep.plan(conn, config, scope, now).evicted:
        out.append(
            Finding(
                "cold",
                cold.ref.path,
                "cold: the next forget sweep evicts it",
                "read or pin it to keep it; an evicted page can be restored with restore-page",
            )
        )
    for first, second, value in similar_pairs(conn, config, scope, now):
        out.append(
            Finding(
                "similar",
                first,
                f"says nearly what `{second}` says (cosine {value:.2f}); one may contradict "
                "or repeat the other (advisory)",
                f"merge them, or link the two and say how `{first}` differs",
            )
        )
    return out


def render(scope: Scope, findings: list[Finding]) -> str:
    """The report page; past MAX_LISTED findings it counts the rest (the tool lists all)."""
    by_rule: dict[str, int] = {}
    for f in findings:
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    lines = [f"# Lint report for {scope.project}", "", f"{len(findings)} finding(s)."]
    if by_rule:
        lines += ["", ", ".join(f"{rule}: {n}" for rule, n in sorted(by_rule.items()))]
    lines.append("")
    for f in findings[:MAX_LISTED]:
        lines.append(f"- **{f.rule}** `{f.path}`: {f.message}. Fix: {f.fix}.")
    if len(findings) > MAX_LISTED:
        lines += [
            "",
            f"… and {len(findings) - MAX_LISTED} more: `ai-memory lint --json` lists all.",
        ]
    if not findings:
        lines.append("Nothing to fix.")
    return "\n".join(lines) + "\n"


def lint_project(
    wiki: Wiki, config: Config, scope: Scope, clock: Callable[[], str] | None = None
) -> dict[str, Any]:
    """Find, then write the report through Wiki; returns the findings and the report's id."""
    now = (clock or wiki.clock)()
    findings = wiki.readers.read(lambda conn: find(conn, config, scope, now))
    report = wiki.write_page(
        scope.page(REPORT),
        render(scope, findings),
        {"title": f"Lint report for {scope.project}", "kind": "lint", "tier": "working"},
        actor="maintenance",
    )
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        "report": REPORT,
        "page_id": report.page_id,
        "findings": [f.to_dict() for f in findings],
    }


def lint(
    wiki: Wiki, config: Config, scope: Scope | None, clock: Callable[[], str] | None = None
) -> list[dict[str, Any]]:
    """Lint one project, or every project that has pages (the index merges in steps
    meanwhile, so no report write pays for a large merge)."""
    if scope is not None:
        scopes = [scope]
    else:
        projects = wiki.readers.read(pages.list_projects)
        scopes = [Scope(p["workspace"], p["name"]) for p in projects if p["pages"]]
    reports = []
    with merging_in_steps(wiki.writer, wiki.write_timeout) as merger:
        for each in scopes:
            reports.append(lint_project(wiki, config, each, clock))
            merger.step()
    return reports
