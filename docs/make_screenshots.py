"""Regenerate the screenshots in docs/screenshots/ from a real server and headless Chromium.

    .venv/bin/python docs/make_screenshots.py

Seeds a fresh data dir (the web tests' content plus a small linked wiki and a
few sessions), signs in by link and saves one PNG per UI page.
"""

from __future__ import annotations

import base64
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cdp_support import Browser  # noqa: E402
from tests.conftest import ServerProcess, clean_env, seed_web_content  # noqa: E402

from ai_memory.config import Config  # noqa: E402
from ai_memory.maintenance.init import initialise  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
PAGES = {
    "home": "/web",
    "project": "/web/default/api",
    "health": "/web/health",
    "sessions": "/web/sessions",
    "session": "/web/default/api/session/s-1",
    "tree": "/web/default/api/tree",
    "diff": "/web/default/api/diff/concepts/wal.md",
    "graph": "/web/default/api/graph",
    "search-explain": "/web/search?q=cart+writer&project=api&explain=1",
}
FOLDERS = ("concepts", "decisions", "gotchas", "procedures", "notes")
WORDS = [
    "cart",
    "checkout",
    "writer",
    "reader",
    "index",
    "wiki",
    "token",
    "session",
    "handoff",
    "queue",
    "spool",
]


def seed_more(server: ServerProcess) -> None:
    rng = random.Random(3)
    with server.client() as client:
        for i in range(80):
            links = " ".join(
                f"[[{FOLDERS[j % 5]}/topic-{j}.md]]" for j in rng.sample(range(80), 3) if j != i
            )
            body = f"{' '.join(rng.choices(WORDS, k=30))}\n\nSee {links}.\n"
            title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}"
            path = f"/api/v1/projects/default/api/pages/{FOLDERS[i % 5]}/topic-{i}.md"
            client.put(path, json={"body": body, "title": title}).raise_for_status()
        for n, prompt in enumerate(("add the checkout page", "why is the writer slow?")):
            params = {"project": "api", "agent": ("codex", "gemini")[n], "session_id": f"t-{n}"}
            events = [
                {"hook_event_name": "UserPromptSubmit", "prompt": prompt},
                {
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Read",
                    "tool_input": {"file_path": "src/writer.py"},
                    "tool_response": {"content": "class Writer: ..."},
                },
                {"hook_event_name": "Stop", "last_assistant_message": f"Done: {prompt}."},
            ]
            for event in events:
                client.post("/hook", params=params, json=event).raise_for_status()


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        initialise(Config.load(root, {}))
        server = ServerProcess(root).start()
        try:
            with server.client() as client:
                seed_web_content(client)
            seed_more(server)
            for name, page in PAGES.items():
                url = f"{server.url}/web/login?{urlencode({'token': server.token, 'next': page})}"
                target = OUT / f"{name}.png"
                subprocess.run(
                    [
                        chromium,
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--hide-scrollbars",
                        f"--user-data-dir={Path(tmp) / 'profile'}",
                        f"--window-size=1200,{1400 if name == 'graph' else 900}",
                        f"--screenshot={target}",
                        url,
                    ],
                    check=True,
                    capture_output=True,
                    timeout=60,
                )
                print(target.relative_to(ROOT))
            explain_opened(chromium, server, Path(tmp) / "cdp")
        finally:
            server.stop()
        pending_writes(chromium, Path(tmp) / "learning")


def explain_opened(chromium: str, server: ServerProcess, profile: Path) -> None:
    """The search page after a click on the first "why this result" and the query's toggle."""
    page = PAGES["search-explain"]
    target = OUT / "search-explain-open.png"
    flags = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars")
    with Browser(chromium, profile, flags) as tab:
        tab.call(
            "Emulation.setDeviceMetricsOverride",
            width=1200,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        tab.open(f"{server.url}/web/login?{urlencode({'token': server.token, 'next': page})}")
        tab.click("document.querySelector('#query-explain summary')")
        tab.click("document.querySelector('#hits details.explain summary')")
        tab.js("window.scrollTo(0, 0)")
        shot = tab.call("Page.captureScreenshot", format="png")
    target.write_bytes(base64.b64decode(shot["data"]))
    print(target.relative_to(ROOT))


def pending_writes(chromium: str, tmp: Path) -> None:
    """The pending-writes queue: a server whose provider is the tests' fake LLM service
    proposes an edit of a rule and a new procedure from one finished session."""
    from tests.fake_llm import FakeLlm
    from tests.learning_support import finish_session, improve, llm_env, review

    target = OUT / "pending-writes.png"
    with FakeLlm() as fake:
        root = tmp / "data"
        initialise(Config.load(root, {}))
        server = ServerProcess(root, env=clean_env(**llm_env(fake))).start()
        try:
            with server.client() as client:
                rule = "/api/v1/projects/default/shop/pages/_rules/money.md"
                body = "# Money\n\n- Keep amounts in cents.\n- Round once.\n"
                client.put(rule, json={"body": body}).raise_for_status()
                finish_session(client, "shop", "s-7", "the cart total is off by a cent")
                fake.push(
                    review(
                        ("_rules/money.md", body + "- Round at checkout, never per line.\n"),
                        ("procedures/release.md", "1. Run `make check`.\n2. Tag and push.\n"),
                    )
                )
                improve(client, "shop").raise_for_status()
            page = "/web/pending-writes"
            url = f"{server.url}/web/login?{urlencode({'token': server.token, 'next': page})}"
            subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    f"--user-data-dir={tmp / 'profile'}",
                    "--window-size=1200,900",
                    f"--screenshot={target}",
                    url,
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
        finally:
            server.stop()
    print(target.relative_to(ROOT))


if __name__ == "__main__":
    main()
