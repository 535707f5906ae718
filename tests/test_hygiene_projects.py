"""rename-project, move-project and merge-project on a populated data dir.

Each runs through the real server app (real SQLite, real git, hooks through
``/hook``), and is followed by a reindex that must change nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pygit2
from starlette.testclient import TestClient

from ai_memory.config import Config
from ai_memory.maintenance.reindex import reindex
from tests.conftest import SESSION_EVENTS, seeded
from tests.hooks_support import app_client

PAGES = "/api/v1/projects/{ws}/{p}/pages/{path}"
QUERIES = ("zebrafish", "quokka cart", "sqlite", "tax tables")
HOOK = {"workspace": "default", "project": "shop", "agent": "claude-code", "session_id": "s-1"}


def put(client: TestClient, ws: str, project: str, path: str, body: str) -> None:
    seeded(client.put(PAGES.format(ws=ws, p=project, path=path), json={"body": body}))


def populate(client: TestClient) -> None:
    """Two projects that link into each other, a session through /hook, a handoff."""
    put(client, "default", "shop", "concepts/cart.md", "The cart rounds totals with zebrafish.")
    put(client, "default", "shop", "concepts/cart.md", "The cart rounds totals, zebrafish mode.")
    put(client, "default", "shop", "decisions/db.md", "Use SQLite; see [[concepts/cart.md]].")
    put(client, "default", "shop", "notes/ext.md", "Billing lives in [[billing:concepts/tax.md]].")
    put(
        client,
        "default",
        "billing",
        "concepts/tax.md",
        "Tax tables; the cart is [[shop:concepts/cart.md]].",
    )
    put(
        client,
        "default",
        "billing",
        "notes/code.md",
        "Literal `[[shop:concepts/cart.md]]` in code.",
    )
    seeded(
        client.post(
            "/hook",
            params=HOOK,
            json={"hook_event_name": "UserPromptSubmit", "prompt": "fix the quokka cart"},
        )
    )
    for event in SESSION_EVENTS:
        seeded(client.post("/hook", params=HOOK, json=event))
    seeded(client.post("/hook", params=HOOK, json={"hook_event_name": "SessionEnd"}))
    seeded(client.post("/api/v1/handoffs", json={"project": "shop", "summary": "finish cart"}))
    client.post("/api/v1/sessions/flush")


def db(data_dir: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    conn.row_factory = sqlite3.Row
    return conn


def counts(data_dir: Path, ws: str, project: str) -> dict[str, int]:
    with db(data_dir) as conn:
        return {
            table: conn.execute(
                f"SELECT count(*) FROM {table} WHERE workspace = ? AND project = ?", (ws, project)
            ).fetchone()[0]
            for table in ("pages", "sessions", "observations", "handoffs", "links", "audit_log")
        }


def search(client: TestClient, q: str, ws: str, project: str) -> list[str]:
    found = client.get("/api/v1/search", params={"q": q, "project": project, "workspace": ws})
    assert found.status_code == 200, found.text
    return sorted(f"{h['project']}:{h['path']}" for h in found.json()["hits"])


def hygiene(client: TestClient, op: str, **body: Any) -> dict[str, Any]:
    answer = client.post(f"/admin/hygiene/{op}", json=body)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def body_of(client: TestClient, ws: str, project: str, path: str) -> str:
    page = client.get(PAGES.format(ws=ws, p=project, path=path))
    assert page.status_code == 200, page.text
    text: str = page.json()["body"]
    return text


def assert_reindex_changes_nothing(data_dir: Path) -> None:
    report = reindex(Config.load(data_dir, {}))
    assert (report.added, report.updated, report.deleted) == (0, 0, 0), report.warnings


def git_files(data_dir: Path) -> set[str]:
    repo = pygit2.Repository(str(data_dir / "wiki"))
    tree = repo.head.peel(pygit2.Commit).tree
    found: set[str] = set()

    def walk(tree: Any, prefix: str) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                walk(entry, f"{prefix}{entry.name}/")
            else:
                found.add(f"{prefix}{entry.name}")

    walk(tree, "")
    return found


def test_rename_moves_everything_and_sticks_for_future_hooks(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        before = counts(data_dir, "default", "shop")
        assert before["sessions"] == 1 and before["handoffs"] == 2 and before["pages"] >= 4
        dry = hygiene(client, "rename-project", project="shop", new_name="store", dry_run=True)
        assert counts(data_dir, "default", "shop") == before  # a dry run changes nothing
        real = hygiene(client, "rename-project", project="shop", new_name="store")
        assert {**dry, "dry_run": False} == real
        assert real["rows"]["pages"] == before["pages"]
        assert "default/billing/concepts/tax.md" in real["details"]["relinked"]
        after = counts(data_dir, "default", "store")
        assert after["pages"] == before["pages"]  # no page of shop names shop
        assert after["sessions"] == 1 and after["handoffs"] == 2
        assert after["observations"] == before["observations"]
        gone = counts(data_dir, "default", "shop")
        assert {k: v for k, v in gone.items() if k != "audit_log"} == dict.fromkeys(
            ["pages", "sessions", "observations", "handoffs", "links"], 0
        )
        # Search finds the content under the new name only.
        assert "store:concepts/cart.md" in search(client, "zebrafish", "default", "store")
        assert search(client, "zebrafish", "default", "shop") == []
        assert "store:sessions/s-1.md" in search(client, "quokka", "default", "store")
        # Cross-project links were rewritten and still resolve; code is left alone.
        tax = body_of(client, "default", "billing", "concepts/tax.md")
        assert "[[store:concepts/cart.md]]" in tax
        page = client.get(PAGES.format(ws="default", p="billing", path="concepts/tax.md")).json()
        assert page["links"][0]["resolved"] and page["links"][0]["project"] == "store"
        assert "`[[shop:concepts/cart.md]]`" in body_of(
            client, "default", "billing", "notes/code.md"
        )
        # A hook from the checkout that still resolves to the old name lands in the new one.
        later = {**HOOK, "session_id": "s-2"}
        seeded(
            client.post(
                "/hook",
                params=later,
                json={"hook_event_name": "UserPromptSubmit", "prompt": "after the rename"},
            )
        )
        assert counts(data_dir, "default", "store")["sessions"] == 2
        assert counts(data_dir, "default", "shop")["sessions"] == 0
        ended = client.post(
            "/api/v1/sessions/finalize", json={"project": "shop", "session_id": "s-2"}
        )
        assert ended.status_code == 200 and ended.json()["page"] == "sessions/s-2.md"
        assert "after the rename" in body_of(client, "default", "store", "sessions/s-2.md")
        start = client.get("/handoff", params={**later, "session_id": "s-3"})
        assert start.status_code == 200 and "store" in json.dumps(start.json())
        # The rename is in the audit log, the folder moved in git.
        with db(data_dir) as conn:
            audit = conn.execute(
                "SELECT workspace, project, detail FROM audit_log WHERE action = 'rename-project'"
            ).fetchall()
        assert len(audit) == 1 and audit[0]["project"] == "store"
        assert json.loads(audit[0]["detail"])["from"] == "default/shop"
        found = {q: search(client, q, "default", "store") for q in QUERIES}
        listed = client.get("/api/v1/projects").json()["projects"]
    files = git_files(data_dir)
    assert "default/store/concepts/cart.md" in files
    assert not any(f.startswith("default/shop/") for f in files)
    assert not (data_dir / "wiki" / "default" / "shop").exists()
    assert_reindex_changes_nothing(data_dir)
    with app_client(data_dir) as client:  # the rebuilt index answers the same
        assert {q: search(client, q, "default", "store") for q in QUERIES} == found
        assert client.get("/api/v1/projects").json()["projects"] == listed


def test_rename_refuses_an_existing_target_and_bad_names(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        taken = client.post(
            "/admin/hygiene/rename-project", json={"project": "shop", "new_name": "billing"}
        )
        assert taken.status_code == 409 and "merge-project" in taken.json()["message"]
        missing = client.post(
            "/admin/hygiene/rename-project", json={"project": "nope", "new_name": "x"}
        )
        assert missing.status_code == 404
        bad = client.post(
            "/admin/hygiene/rename-project", json={"project": "shop", "new_name": "../etc"}
        )
        assert bad.status_code == 400 and "project" in bad.json()["message"]
        reserved = client.post(
            "/admin/hygiene/rename-project", json={"project": "shop", "new_name": "_global"}
        )
        assert reserved.status_code == 400
        unknown = client.post("/admin/hygiene/rename-project", json={"project": "shop"})
        assert unknown.status_code == 422 and "new_name" in unknown.text
        assert counts(data_dir, "default", "shop")["pages"] > 0


def test_move_to_workspace_keeps_links_reaching_their_pages(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        before = counts(data_dir, "default", "shop")
        dry = hygiene(client, "move-project", project="shop", to_workspace="clients", dry_run=True)
        assert counts(data_dir, "default", "shop") == before
        real = hygiene(client, "move-project", project="shop", to_workspace="clients")
        assert {**dry, "dry_run": False} == real
        assert real["target"] == {"from": "default/shop", "to": "clients/shop"}
        assert counts(data_dir, "clients", "shop")["sessions"] == before["sessions"]
        # shop's link to billing now names billing's workspace; billing's names shop's.
        ext = body_of(client, "clients", "shop", "notes/ext.md")
        assert "[[default/billing:concepts/tax.md]]" in ext
        tax = body_of(client, "default", "billing", "concepts/tax.md")
        assert "[[clients/shop:concepts/cart.md]]" in tax
        assert "shop:concepts/cart.md" in search(client, "zebrafish", "clients", "shop")
        assert search(client, "zebrafish", "default", "shop") == []
        seeded(
            client.post(
                "/hook",
                params={**HOOK, "session_id": "s-9"},
                json={"hook_event_name": "UserPromptSubmit", "prompt": "later"},
            )
        )
        assert counts(data_dir, "clients", "shop")["sessions"] == before["sessions"] + 1
    assert_reindex_changes_nothing(data_dir)


def test_merge_reports_collisions_before_moving_anything(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        put(client, "default", "billing", "concepts/cart.md", "Billing's own cart page.")
        before = counts(data_dir, "default", "shop")
        dry = hygiene(client, "merge-project", project="shop", into="billing", dry_run=True)
        assert dry["collisions"] == ["concepts/cart.md"]
        refused = client.post(
            "/admin/hygiene/merge-project", json={"project": "shop", "into": "billing"}
        )
        assert refused.status_code == 409
        assert "concepts/cart.md" in refused.json()["message"]
        assert counts(data_dir, "default", "shop") == before  # nothing moved
        plan = hygiene(
            client,
            "merge-project",
            project="shop",
            into="billing",
            on_collision="suffix",
            dry_run=True,
        )
        real = hygiene(
            client, "merge-project", project="shop", into="billing", on_collision="suffix"
        )
        assert {**plan, "dry_run": False} == real
        assert real["details"]["renamed"] == {"concepts/cart.md": "concepts/cart-shop.md"}
        # shop's decision linked its own cart page: it now reaches the suffixed one.
        db_page = body_of(client, "default", "billing", "decisions/db.md")
        assert "[[concepts/cart-shop.md]]" in db_page
        assert "[[concepts/cart-shop.md]]" in body_of(
            client, "default", "billing", "concepts/tax.md"
        )
        assert (
            body_of(client, "default", "billing", "concepts/cart.md") == "Billing's own cart page."
        )
        assert "billing:concepts/cart-shop.md" in search(client, "zebrafish", "default", "billing")
        merged = counts(data_dir, "default", "billing")
        assert merged["sessions"] == 1 and merged["handoffs"] == 2
        assert client.get("/api/v1/projects").json()  # still answers
        with db(data_dir) as conn:
            left = conn.execute("SELECT count(*) FROM projects WHERE name = 'shop'").fetchone()[0]
        assert left == 0
    assert_reindex_changes_nothing(data_dir)


def test_merge_keep_dst_drops_the_source_page(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        put(client, "default", "billing", "concepts/cart.md", "Billing's own cart page.")
        # The same session id captured in both projects: one session once merged.
        twin = {**HOOK, "project": "billing"}
        prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "the billing half"}
        seeded(client.post("/hook", params=twin, json=prompt))
        seeded(client.post("/hook", params=twin, json={"hook_event_name": "SessionEnd"}))
        client.post("/api/v1/sessions/flush")
        observations = sum(
            counts(data_dir, "default", p)["observations"] for p in ("shop", "billing")
        )
        real = hygiene(
            client, "merge-project", project="shop", into="billing", on_collision="keep-dst"
        )
        assert real["details"]["dropped"] == ["concepts/cart.md", "sessions/s-1.md"]
        merged = counts(data_dir, "default", "billing")
        assert merged["sessions"] == 1 and merged["observations"] == observations
        with db(data_dir) as conn:
            audit = conn.execute(
                "SELECT project FROM audit_log WHERE action = 'merge-project'"
            ).fetchall()
        assert [row["project"] for row in audit] == ["billing"]
        assert (
            body_of(client, "default", "billing", "concepts/cart.md") == "Billing's own cart page."
        )
        assert not any("cart" in hit for hit in search(client, "zebrafish", "default", "billing"))
        assert "[[concepts/cart.md]]" in body_of(client, "default", "billing", "concepts/tax.md")
        bad = client.post(
            "/admin/hygiene/merge-project", json={"project": "billing", "into": "nowhere"}
        )
        assert bad.status_code == 404
    assert_reindex_changes_nothing(data_dir)
