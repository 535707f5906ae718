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
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from bm25_turns import TurnIndex, recall, shown  # type: ignore[import-not-found]
from harness import (  # type: ignore[import-not-found]
    percentile,
    running_server,
    searcher,
    send_hooks,
    turn_keys,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D(\d+):")


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
    return send_hooks(client, items)


def dia_of_keys(data: list[dict[str, Any]]) -> dict[str, str]:
    """ingest key of each turn's prompt event -> its LoCoMo dia id."""
    out = {}
    for conv in data:
        for n, _, turns in sessions_of(conv["conversation"]):
            for i, turn in enumerate(turns, 1):
                out[f"{conv['sample_id']}-s{n}-{i}"] = str(turn["dia_id"])
    return out


def turn_rows(data: list[dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    rows = []
    for conv in data:
        for n, date, turns in sessions_of(conv["conversation"]):
            for turn, prompt in zip(turns, prompts_of(date, turns), strict=True):
                rows.append((conv["sample_id"], n, str(turn["dia_id"]), prompt))
    return rows


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


def questions(data: list[dict[str, Any]]) -> Iterator[tuple[str, int, str, set[int], set[str]]]:
    """(conversation, category, question, evidence sessions, evidence dia ids)."""
    for conv in data:
        for qa in conv["qa"]:
            category = int(qa.get("category", 0))
            evidence = {str(e) for e in qa.get("evidence", [])}
            sessions = {int(m) for e in evidence for m in _EVIDENCE.findall(e)}
            if category in CATEGORIES and sessions:
                yield conv["sample_id"], category, qa["question"], sessions, evidence


Ranks = dict[int, list[tuple[int | None, bool]]]


def run_queries(
    search: Any, data: list[dict[str, Any]], dia: dict[str, str]
) -> tuple[Ranks, list[float]]:
    """Per category: (rank of the first evidence session, evidence turn among the top 5)."""
    ranks: Ranks = defaultdict(list)
    latencies: list[float] = []
    for sample, category, question, sessions, evidence in questions(data):
        wanted = {f"sessions/{sample}-s{n}.md" for n in sessions}
        started = time.perf_counter()
        result = search(sample, question)
        latencies.append((time.perf_counter() - started) * 1000)
        paths = [h["path"] for h in result["hits"]]
        rank = next((i for i, p in enumerate(paths, 1) if p in wanted), None)
        shown = [t["observation_id"] for h in result["hits"][:5] for t in h.get("turns") or []]
        shown += [r["observation_id"] for r in result.get("raw_hits", [])[:5]]
        ranks[category].append((rank, any(dia.get(key) in evidence for key in shown)))
    return ranks, latencies


def baseline(data: list[dict[str, Any]], tokenizer: str, budget: bool = False) -> Ranks:
    """BM25 over turns; with ``budget``, turn R@5 counts the turns the pipeline's budget
    would show (2 best turns of each of the first 5 sessions, each with its next turn)."""
    index = TurnIndex(tokenizer, turn_rows(data))
    out: Ranks = defaultdict(list)
    for sample, category, question, sessions, evidence in questions(data):
        ranked = index.ranked(sample, question)
        rank, top5 = recall(ranked, sessions, evidence)
        out[category].append((rank, shown(ranked, evidence) if budget else top5))
    return out


def metrics(pairs: list[tuple[int | None, bool]]) -> dict[str, float]:
    n = len(pairs) or 1
    ranks = [r for r, _ in pairs]
    return {
        "n": len(ranks),
        "turn R@5": sum(1 for _, t in pairs if t) / n,
        "R@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "MRR": sum(1 / r for r in ranks if r is not None) / n,
    }


def report(label: str, ranks: Ranks, latencies: list[float]) -> dict[str, Any]:
    rows = {CATEGORIES[c]: metrics(ranks[c]) for c in sorted(ranks)}
    rows["overall"] = metrics([r for c in sorted(ranks) for r in ranks[c]])
    p50 = statistics.median(latencies) if latencies else 0.0
    p95 = percentile(latencies, 0.95)
    print(f"\n## {label}\n")
    print("| category | n | R@1 | R@5 | R@10 | MRR | turn R@5 |")
    print("|---|---|---|---|---|---|---|")
    for name, m in rows.items():
        print(
            f"| {name} | {m['n']} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} "
            f"| {m['MRR']:.3f} | {m['turn R@5']:.3f} |"
        )
    if latencies:
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
    with running_server(vectors, keep, settings) as (url, token, data_dir):
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
            search = searcher(query_via, url, token, client)
            dia_of = dia_of_keys(data)
            dia = {k: dia_of.get(v, "") for k, v in turn_keys(data_dir).items()}
            try:
                ranks, latencies = run_queries(search, data, dia)
            finally:
                if hasattr(search, "close"):
                    search.close()
            label = f"{'with' if vectors else 'without'} vectors — {search.name}"
            print(f"\n{count} {what}; ready for queries after {ingest_s:.1f} s")
            return report(label, ranks, latencies)


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
    for tokenizer in ("porter", "unicode61"):
        label = f"baseline: FTS5 BM25 over single turns, {tokenizer} (sessions in turn order)"
        results.append(report(label, baseline(data, tokenizer), []))
    label = (
        "baseline: FTS5 BM25 over single turns, porter; turn R@5 over the turns the "
        "pipeline would show (2 best turns of each of the first 5 sessions, each with the next)"
    )
    results.append(report(label, baseline(data, "porter", budget=True), []))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
