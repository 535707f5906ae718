"""LoCoMo retrieval eval through the real pipeline: hooks in, search out.

Starts a real ``ai-memory serve`` on a fresh data dir, sends every LoCoMo
session as agent hook events through ``POST /hook/batch`` (one project per
conversation), waits until the session pages are written (and embedded, when
vectors are on), then asks every category 1-4 question with evidence and
reports R@1/5/10 and MRR per category and overall, plus query latency.

    python evals/locomo.py [--data ../shared/data/locomo/dev.json] [--vectors both|on|off]

Questions go to the MCP tool ``memory_query`` through a real MCP client over
streamable HTTP (``--query mcp``, the default) or to ``GET /api/v1/search``
(``--query http``); the same function answers both. ``--ingest pages`` skips
the hooks and writes the session pages directly in the same format.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D(\d+):")
BATCH = 256


# -- the server -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(
    vectors: bool, keep: Path | None, settings: dict[str, str]
) -> Iterator[tuple[str, str]]:
    """A fresh data dir and a real server on a free port; yields (url, token)."""
    tmp = tempfile.TemporaryDirectory(prefix="locomo-")
    data_dir = keep or Path(tmp.name) / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
    env["AI_MEMORY_EMBEDDINGS__PROVIDER"] = "local" if vectors else "none"
    env.update(settings)
    cli = [sys.executable, "-m", "ai_memory"]
    subprocess.run([*cli, "init", "--data-dir", str(data_dir)], env=env, check=True, stdout=-3)
    port = _free_port()
    log = open(data_dir / "eval-server.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [*cli, "serve", "--data-dir", str(data_dir), "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        token = (data_dir / "auth-tokens" / "default").read_text().strip()
        yield url, token
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        tmp.cleanup()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not become healthy")


# -- ingest -------------------------------------------------------------------------


def sessions_of(conversation: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    out = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list) and turns:
            n = int(match.group(1))
            out.append((n, str(conversation.get(f"session_{n}_date_time", "")), turns))
    return sorted(out)


def prompts_of(date: str, turns: list[dict[str, Any]]) -> list[str]:
    prompts = [f"{t['speaker']}: {t['text']}" for t in turns]
    if prompts and date:
        prompts[0] = f"{date}\n{prompts[0]}"
    return prompts


def hook_events(sample_id: str, n: int, date: str, turns: list[dict[str, Any]]) -> list[Any]:
    session_id = f"{sample_id}-s{n}"
    params = {"agent": "claude-code", "project": sample_id, "session_id": session_id}
    base = {"session_id": session_id, "cwd": f"/work/{sample_id}"}
    events = [("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})]
    for prompt in prompts_of(date, turns):
        events.append(
            ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        )
    events.append(("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}))
    return [
        {"params": {**params, "event": event, "ingest_key": f"{session_id}-{i}"}, "body": body}
        for i, (event, body) in enumerate(events)
    ]


def ingest_hooks(client: httpx.Client, data: list[dict[str, Any]]) -> int:
    items = []
    for conv in data:
        for n, date, turns in sessions_of(conv["conversation"]):
            items += hook_events(conv["sample_id"], n, date, turns)
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        for attempt in range(100):
            response = client.post("/hook/batch", json=chunk)
            response.raise_for_status()
            results = response.json()["results"]
            retry = [chunk[r["index"]] for r in results if r["status"] == 429]
            bad = [r for r in results if r["status"] not in (202, 429)]
            if bad:
                raise SystemExit(f"hook batch rejected items: {bad[:3]}")
            if not retry:
                break
            chunk = retry
            time.sleep(0.05 * (attempt + 1))
    return len(items)


def session_page(sample_id: str, n: int, date: str, turns: list[dict[str, Any]]) -> str:
    """The session page as the capture path renders it (development mode only)."""
    session_id = f"{sample_id}-s{n}"
    prompts = prompts_of(date, turns)
    title = " ".join(prompts[0].split())
    title = title[:120] + ("…" if len(title) > 120 else "")
    lines = [f"# {title}", "", "- Agent: claude-code", f"- Session: `{session_id}`", ""]
    lines += ["## Prompts", ""]
    for number, prompt in enumerate(prompts, 1):
        lines += [f"### Prompt {number}", "", prompt, ""]
    lines += ["## Tool calls", "", "(none)", "", "## Files touched", "", "(none)"]
    front = {"title": title, "kind": "session", "tier": "episodic", "session_id": session_id}
    return "---\n" + json.dumps(front, ensure_ascii=False) + "\n---\n" + "\n".join(lines) + "\n"


def ingest_pages(client: httpx.Client, data: list[dict[str, Any]]) -> int:
    count = 0
    for conv in data:
        sample = conv["sample_id"]
        for n, date, turns in sessions_of(conv["conversation"]):
            url = f"/api/v1/projects/default/{sample}/pages/sessions/{sample}-s{n}.md"
            client.put(url, json={"body": session_page(sample, n, date, turns)}).raise_for_status()
            count += 1
    return count


def wait_for_pages(client: httpx.Client, data: list[dict[str, Any]], vectors: bool) -> None:
    """Session pages are written after the hook answers; vectors shortly after that."""
    deadline = time.monotonic() + 1800
    for conv in data:
        expected = len(sessions_of(conv["conversation"]))
        url = f"/api/v1/projects/default/{conv['sample_id']}/pages"
        while True:
            pages = client.get(url, params={"limit": 500}).json()["pages"]
            if sum(p["path"].startswith("sessions/") for p in pages) >= expected:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{conv['sample_id']}: session pages never appeared")
            time.sleep(0.2)
    while vectors:
        status = client.get("/api/v1/embeddings").json()
        if status.get("pending", 1) == 0:
            break
        if time.monotonic() > deadline:
            raise SystemExit("embedding never caught up")
        time.sleep(1.0)


# -- queries ------------------------------------------------------------------------


class HttpSearch:
    name = "GET /api/v1/search"

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def __call__(self, project: str, question: str) -> list[str]:
        params = {"q": question, "project": project, "limit": 10}
        response = self.client.get("/api/v1/search", params=params)
        response.raise_for_status()
        return [h["path"] for h in response.json()["hits"]]


def run_queries(
    search: Any, data: list[dict[str, Any]]
) -> tuple[dict[int, list[int | None]], list[float]]:
    ranks: dict[int, list[int | None]] = defaultdict(list)
    latencies: list[float] = []
    for conv in data:
        sample = conv["sample_id"]
        for qa in conv["qa"]:
            category = int(qa.get("category", 0))
            sessions = {int(m) for e in qa.get("evidence", []) for m in _EVIDENCE.findall(str(e))}
            if category not in CATEGORIES or not sessions:
                continue
            wanted = {f"sessions/{sample}-s{n}.md" for n in sessions}
            started = time.perf_counter()
            paths = search(sample, qa["question"])
            latencies.append((time.perf_counter() - started) * 1000)
            rank = next((i for i, p in enumerate(paths, 1) if p in wanted), None)
            ranks[category].append(rank)
    return ranks, latencies


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "R@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "MRR": sum(1 / r for r in ranks if r is not None) / n,
    }


def report(
    label: str, ranks: dict[int, list[int | None]], latencies: list[float]
) -> dict[str, Any]:
    rows = {CATEGORIES[c]: metrics(ranks[c]) for c in sorted(ranks)}
    rows["overall"] = metrics([r for c in sorted(ranks) for r in ranks[c]])
    latencies.sort()
    p50 = statistics.median(latencies) if latencies else 0.0
    p95 = latencies[int(0.95 * (len(latencies) - 1))] if latencies else 0.0
    print(f"\n## {label}\n")
    print("| category | n | R@1 | R@5 | R@10 | MRR |")
    print("|---|---|---|---|---|---|")
    for name, m in rows.items():
        print(
            f"| {name} | {m['n']} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} "
            f"| {m['MRR']:.3f} |"
        )
    print(f"\nquery latency (client side): p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return {"label": label, "metrics": rows, "p50_ms": p50, "p95_ms": p95}


def evaluate(
    data: list[dict[str, Any]],
    vectors: bool,
    via: str,
    query_via: str,
    keep: Path | None,
    settings: dict[str, str],
) -> Any:
    with running_server(vectors, keep, settings) as (url, token):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            started = time.perf_counter()
            if via == "pages":
                count = ingest_pages(client, data)
                what = "pages written directly"
            else:
                count = ingest_hooks(client, data)
                what = "hook events through /hook/batch"
            wait_for_pages(client, data, vectors)
            ingest_s = time.perf_counter() - started
            search = _searcher(query_via, url, token, client)
            try:
                ranks, latencies = run_queries(search, data)
            finally:
                if hasattr(search, "close"):
                    search.close()
            label = f"{'with' if vectors else 'without'} vectors — {search.name}"
            print(f"\n{count} {what}; ready for queries after {ingest_s:.1f} s")
            return report(label, ranks, latencies)


def _searcher(query_via: str, url: str, token: str, client: httpx.Client) -> Any:
    if query_via == "mcp":
        from mcp_search import McpSearch  # type: ignore[import-not-found]

        return McpSearch(url, token)
    return HttpSearch(client)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--vectors", choices=("both", "on", "off"), default="both")
    parser.add_argument(
        "--ingest", choices=("hooks", "pages"), default="hooks", help="how sessions get in"
    )
    parser.add_argument(
        "--query", choices=("mcp", "http"), default="mcp", help="how questions are asked"
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", type=Path, help="use (and keep) this data dir")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION__KEY=VALUE",
        help="a server setting, e.g. retrieval__weight_evidence=0.5; repeatable",
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        data = data[: args.conversations]
    modes = {"both": [False, True], "on": [True], "off": [False]}[args.vectors]
    settings = {}
    for item in args.set:
        key, _, value = item.partition("=")
        settings[f"AI_MEMORY_{key.upper()}"] = value
    results = [
        evaluate(data, vectors, args.ingest, args.query, args.keep, settings) for vectors in modes
    ]
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
