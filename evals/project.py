"""The project-shaped eval: does curated knowledge beat session chatter?

A real server gets a coding project the way it would in use: agents write
curated pages through the HTTP API, a person edits files in the wiki folder
(the watcher indexes them), ~120 agent sessions arrive as hook events, two
decisions are replaced (in place, and by a new page), and ``_global`` holds
preferences. Then every question goes to ``memory_query`` over a real MCP
client and the eval reports:

* curated R@1: the curated page is the first hit;
* current above superseded: the current decision ranks above the replaced one;
* global R@1: the ``_global`` preference is the first shared hit;
* turn R@5: a one-off fact said in one turn is among the turns of the top 5 hits.

    python evals/project.py [--query mcp|http] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from harness import percentile, running_server, searcher, send_hooks  # type: ignore[import-not-found]
from project_corpus import (  # type: ignore[import-not-found]
    CURATED,
    FACTS,
    GLOBAL,
    IN_PLACE_NEW,
    IN_PLACE_OLD,
    QUESTIONS,
    REPLACED_NEW,
    REPLACED_OLD,
    Page,
    sessions,
)

PROJECT = "shop"


def write_page(client: httpx.Client, data_dir: Path, page: Page) -> None:
    if page.by == "person":
        file = data_dir / "wiki" / "default" / page.project / page.path
        file.parent.mkdir(parents=True, exist_ok=True)
        front = json.dumps({"title": page.title, "kind": page.kind, "tags": list(page.tags)})
        file.write_text(f"---\n{front}\n---\n{page.body}\n", encoding="utf-8")
        return
    url = f"/api/v1/projects/default/{page.project}/pages/{page.path}"
    body = {"body": page.body, "title": page.title, "kind": page.kind, "tags": list(page.tags)}
    client.put(url, json=body).raise_for_status()


def hook_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for n, steps in enumerate(sessions()):
        sid = f"work-{n:03d}"
        params = {"agent": "claude-code", "project": PROJECT, "session_id": sid}
        base = {"session_id": sid, "cwd": "/work/shop"}
        events: list[tuple[str, dict[str, Any]]] = [
            ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
        ]
        for kind, text, output in steps:
            if kind == "prompt":
                events.append(("UserPromptSubmit", {**base, "prompt": text}))
            else:
                tool = {"tool_name": kind, "tool_input": {"command": text}, "tool_response": output}
                events.append(("PostToolUse", {**base, **tool}))
        events.append(("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}))
        for i, (event, body) in enumerate(events):
            body.setdefault("hook_event_name", event)
            key = {"event": event, "ingest_key": f"{sid}-{i}"}
            items.append({"params": {**params, **key}, "body": body})
    return items


def build(client: httpx.Client, data_dir: Path) -> None:
    for page in [*CURATED, IN_PLACE_OLD, REPLACED_OLD, *GLOBAL]:
        write_page(client, data_dir, page)
    send_hooks(client, hook_items())
    for page in (IN_PLACE_NEW, REPLACED_NEW):
        write_page(client, data_dir, page)
    wanted = {p.path for p in [*CURATED, REPLACED_NEW]}
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        listed = client.get(f"/api/v1/projects/default/{PROJECT}/pages", params={"limit": 500})
        found = {p["path"] for p in listed.json()["pages"]}
        if wanted <= found and sum(p.startswith("sessions/") for p in found) >= len(sessions()):
            return
        time.sleep(0.2)
    raise SystemExit("the corpus never finished indexing")


def ask(search: Any) -> dict[str, list[bool]]:
    outcome: dict[str, list[bool]] = {"curated": [], "current": [], "global": [], "turn": []}
    for q in QUESTIONS:
        result = search(PROJECT, q.text, **q.extra)
        hits = [(h["path"], bool(h.get("superseded"))) for h in result["hits"]]
        if q.kind == "curated":
            outcome["curated"].append(bool(hits) and hits[0][0] == q.expect)
            if not outcome["curated"][-1]:
                print(f"miss: {q.text!r} -> {[h[0] for h in hits[:3]]}")
        elif q.kind == "global":
            shared = [h["path"] for h in result["global_hits"]]
            outcome["global"].append(bool(shared) and shared[0] == q.expect)
        else:
            current = next((i for i, h in enumerate(hits) if h == (q.expect, False)), None)
            old_key = (q.older or q.expect, not q.older)
            older = next((i for i, h in enumerate(hits) if h == old_key), len(hits))
            outcome["current"].append(current is not None and current < older)
    for fact, question in FACTS:
        result = search(PROJECT, question)
        turns = [t["snippet"] for h in result["hits"][:5] for t in h.get("turns") or []]
        turns += [r["snippet"] for r in result.get("raw_hits", [])[:5]]
        key = " ".join(fact.split()[:4])
        outcome["turn"].append(any(key in t for t in turns))
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--query", choices=("mcp", "http"), default="mcp")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="use (and keep) this data dir")
    args = parser.parse_args(argv)
    with running_server(False, args.keep, {}) as (url, token, data_dir):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            build(client, data_dir)
            search = searcher(args.query, url, token, client)
            timed: list[float] = []

            def measured(*a: Any, **k: Any) -> Any:
                started = time.perf_counter()
                out = search(*a, **k)
                timed.append((time.perf_counter() - started) * 1000)
                return out

            try:
                outcome = ask(measured)
            finally:
                if hasattr(search, "close"):
                    search.close()
    print(f"\n## project-shaped eval — {search.name}\n")
    print("| measure | n | share |")
    print("|---|---|---|")
    names = {
        "curated": "curated page first (R@1)",
        "current": "current decision above superseded",
        "global": "_global preference first among shared hits",
        "turn": "fact's turn among the top-5 hits' turns",
    }
    for key, label in names.items():
        got = outcome[key]
        print(f"| {label} | {len(got)} | {sum(got) / max(len(got), 1):.3f} |")
    print(
        f"\nquery latency: p50 {statistics.median(timed):.1f} ms, "
        f"p95 {percentile(timed, 0.95):.1f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps(outcome, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
