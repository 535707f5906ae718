"""``ai-memory llm-test``: ask every configured LLM candidate one tiny structured question.

It runs from the config and the environment alone (no server), with the keys the
server would use, so a wrong model name or key shows before consolidation needs it.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ai_memory.cli.options import DataDir, Json, load_config
from ai_memory.cli.output import emit_json, err, out, styled


def register(app: typer.Typer) -> None:
    app.command("llm-test")(llm_test)


def llm_test(data_dir: DataDir = None, as_json: Json = False) -> None:
    """Check each LLM candidate end to end; exit 0 when all answer, 1 otherwise."""
    config = load_config(data_dir)
    if config.llm.provider == "none":
        if as_json:
            emit_json({"configured": False, "candidates": []})
        else:
            err.print('no LLM provider configured ([llm] provider = "none")')
        sys.exit(1)
    import asyncio

    from ai_memory.llm.build import build_chat

    chat = build_chat(config)
    assert chat is not None
    results = asyncio.run(_run(chat))
    failed = any(not r["ok"] for r in results)
    if as_json:
        emit_json({"configured": True, "ok": not failed, "candidates": results})
    else:
        _print(results)
    sys.exit(1 if failed else 0)


async def _run(chat: Any) -> list[dict[str, Any]]:
    from ai_memory.llm.check import check_candidates

    try:
        return await check_candidates(chat)
    finally:
        await chat.aclose()


def _print(results: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table("provider", "model", "tasks", "", "ms", "detail")
    for r in results:
        mark = styled("ok", "green") if r["ok"] else styled("failed", "red")
        detail = "" if r["ok"] else f"{r['error']}: {r['message']}"
        table.add_row(
            r["provider"], r["model"], ", ".join(r["tasks"]), mark, f"{r['elapsed_ms']:g}", detail
        )
    out.print(table)
