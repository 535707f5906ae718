"""A 1,000-session ``ai-memory backfill``, timed as the whole process a user runs.

    python benchmarks/bench_backfill.py [--sessions 1000] [--projects 5] [--server]

The sessions are synthesised from the transcripts the real agent CLIs wrote
(tests/fixtures/transcripts): a quarter each of Claude Code, Codex, Gemini CLI
and OpenCode, in each one's own format, each session with its own id, prompt,
times and one of ``--projects`` checkouts. It prints the import's own progress
lines, then the time of a dry run (reading and planning alone: the baseline) and
of the real import into a fresh data dir (no server running: in process), and the
sessions and events per second; ``--server`` also times the same import into a
second fresh data dir through a running server (``/hook/batch``, then the flush
until every page is written). The import must take at most 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.backfill_homes import AGENTS, agent_home, checkout

from benchmarks.common import Server, fresh_data_dir

LIMIT_S = 60.0
CLAUDE_ID = "0410c98e-07b1-4a53-8005-1896f3d0ced9"
CODEX_ID = "01a2321f-1a68-7b60-96d4-e876712424aa"
GEMINI_ID = "44625901-463d-4496-9257-fc7e63b7e905"
PROMPT = "print the greeting number 0 for the shop"
BASE = "/nonexistent/template-checkout"  # where the template sessions ran, replaced per copy


def synthesise(root: Path, sessions: int, projects: int) -> Path:
    """A home holding ``sessions`` sessions, spread over the agents and the checkouts."""
    folders = [checkout(root / "src", f"shop-{n}") for n in range(projects)]
    template = agent_home(root / "template", Path(BASE))
    home = root / "home"
    per_agent = sessions // len(AGENTS)
    for n in range(per_agent):
        target = str(folders[n % projects])
        day = f"2026-{1 + n % 11:02d}-{1 + n % 28:02d}"
        _claude(template, home, n, target, day)
        _codex(template, home, n, target, day)
        _gemini(template, home, n, target, day)
    _opencode(template, home, per_agent, [str(f) for f in folders])
    return home


def _vary(text: str, n: int, target: str, day: str, old_id: str, new_id: str) -> str:
    """The template's text as session ``n``: its own id, day, prompt and checkout."""
    text = text.replace(old_id, new_id).replace("2026-12-01", day)
    text = text.replace(PROMPT, f"print the greeting number {n} for shop {n % 97}")
    return text.replace(BASE, target)


def _claude(template: Path, home: Path, n: int, target: str, day: str) -> None:
    folder = next((template / ".claude" / "projects").iterdir())
    text = (folder / f"{CLAUDE_ID}.jsonl").read_text()
    new_id = f"{n:08d}-0000-4000-8000-{n:012d}"
    out = home / ".claude" / "projects" / f"-shop-{n % 7}"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{new_id}.jsonl").write_text(_vary(text, n, target, day, CLAUDE_ID, new_id))


def _codex(template: Path, home: Path, n: int, target: str, day: str) -> None:
    (path,) = (template / ".codex" / "sessions").rglob(f"*{CODEX_ID}.jsonl")
    text = path.read_text()
    new_id = f"{n:08d}-1111-7000-8000-{n:012d}"
    out = home / ".codex" / "sessions" / day.replace("-", "/")
    out.mkdir(parents=True, exist_ok=True)
    varied = _vary(text, n, target, day, CODEX_ID, new_id)
    (out / f"rollout-{day}T10-00-00-{new_id}.jsonl").write_text(varied)


def _gemini(template: Path, home: Path, n: int, target: str, day: str) -> None:
    (path,) = (template / ".gemini" / "tmp").rglob(f"session-*{GEMINI_ID[:8]}.jsonl")
    text = path.read_text()
    new_id = f"{n:08d}-2222-4000-8000-{n:012d}"
    out = home / ".gemini" / "tmp" / Path(target).name / "chats"
    out.mkdir(parents=True, exist_ok=True)
    (out.parent / ".project_root").write_text(target)
    varied = _vary(text, n, target, day, GEMINI_ID, new_id)
    (out / f"session-{day}T10-00-{new_id[:8]}.jsonl").write_text(varied)


def _opencode(template: Path, home: Path, count: int, targets: list[str]) -> None:
    """``count`` copies of the first OpenCode session, rows and ids renamed."""
    source = template / ".local" / "share" / "opencode" / "opencode.db"
    out = home / ".local" / "share" / "opencode"
    out.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(source)) as conn:
        conn.execute(f"VACUUM INTO '{out / 'opencode.db'}'")
    with closing(sqlite3.connect(out / "opencode.db")) as conn, conn:
        (first,) = conn.execute("SELECT id FROM session ORDER BY time_created LIMIT 1").fetchone()
        conn.execute("DELETE FROM session WHERE id != ?", (first,))
        for n in range(1, count):
            shift = n * 86_400_000 // 3
            suffix = f"{n:06d}"
            conn.execute(
                "INSERT INTO session SELECT id || ?, project_id, workspace_id, parent_id, slug, "
                "?, path, title, version, share_url, summary_additions, summary_deletions, "
                "summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, "
                "tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, "
                "agent, model, time_created - ?, time_updated - ?, time_compacting, "
                "time_archived FROM session WHERE id = ?",
                (suffix, targets[n % len(targets)], shift, shift, first),
            )
            conn.execute(
                "INSERT INTO message SELECT id || ?, session_id || ?, time_created - ?, "
                "time_updated - ?, data FROM message WHERE session_id = ?",
                (suffix, suffix, shift, shift, first),
            )
            conn.execute(
                "INSERT INTO part SELECT id || ?, message_id || ?, session_id || ?, "
                "time_created - ?, time_updated - ?, replace(data, ?, ?) FROM part "
                "WHERE session_id = ?",
                (suffix, suffix, suffix, shift, shift, PROMPT, f"greeting {n}", first),
            )
        conn.execute("UPDATE session SET directory = ? WHERE id = ?", (targets[0], first))
        conn.execute("UPDATE part SET data = replace(data, ?, ?)", (BASE, targets[0]))


def run(data_dir: Path, home: Path, *extra: str) -> tuple[float, dict[str, object]]:
    argv = [sys.executable, "-m", "ai_memory", "backfill", "--home", str(home),
            "--data-dir", str(data_dir), "--json", *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, env=env, check=True)  # progress: stderr
    return time.perf_counter() - started, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--projects", type=int, default=5)
    parser.add_argument("--server", action="store_true", help="also through a running server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-backfill-") as tmp:
        root = Path(tmp)
        home = synthesise(root, args.sessions, args.projects)
        data_dir = fresh_data_dir(root, "data")
        print(f"load: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
        dry_s, dry = run(data_dir, home, "--dry-run")
        real_s, real = run(data_dir, home)
        again_s, again = run(data_dir, home)
        served: tuple[float, dict[str, object]] | None = None
        if args.server:
            other = fresh_data_dir(root, "served")
            with Server(other) as server:
                served = run(other, home, "--server", server.url)
    for key in ("sessions", "events", "skipped_lines", "projects"):
        assert dry[key] == real[key], (key, dry[key], real[key])
    sessions, events = int(str(real["sessions"])), int(str(real["events"]))
    projects = real["projects"]
    assert isinstance(projects, dict)
    print(f"dry run (read + plan): {dry_s:.2f} s for {sessions} sessions, {events} events, "
          f"{len(projects)} projects")  # fmt: skip
    print(f"import: {real_s:.2f} s ({sessions / real_s:.0f} sessions/s, "
          f"{events / real_s:.0f} events/s; {real_s / dry_s:.1f}x the dry run); "
          f"stored {real['stored']}, rejected {real['rejected']}")  # fmt: skip
    print(f"second run: {again_s:.2f} s, stored {again['stored']}, already {again['duplicates']}")
    if served is not None:
        print(f"through a server: {served[0]:.2f} s ({sessions / served[0]:.0f} sessions/s), "
              f"via {served[1]['via']}, accepted {served[1]['accepted']}")  # fmt: skip
    verdict = "ok" if real_s <= LIMIT_S else "OVER"
    print(f"{verdict}: {real_s:.1f} s against the {LIMIT_S:.0f} s budget")


if __name__ == "__main__":
    main()
