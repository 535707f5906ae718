"""The hook routes' folded path: every check of the middleware stack still answers."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from ai_memory.web.hook_fast import HookFast
from tests.conftest import ServerProcess, clean_env
from tests.hooks_support import app_client
from tests.team_support import as_user, make_user, revoke_key

HOOK = "/hook?workspace=default&project=fast&agent=claude-code&session_id=s-1"
PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "hello"}


def folded(app: Any) -> HookFast:
    layer = app.middleware_stack
    while not isinstance(layer, HookFast):
        layer = layer.app
    return layer


def stored_keys(data_dir: Path) -> list[str]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        return [row[0] for row in conn.execute("SELECT ingest_key FROM observations ORDER BY id")]
    finally:
        conn.close()


def test_the_hook_routes_take_the_folded_path_and_count_in_the_metrics(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        first = client.post(f"{HOOK}&ingest_key=k-1", json=PROMPT)
        again = client.post(f"{HOOK}&ingest_key=k-1", json=PROMPT)
        batch = client.post("/hook/batch", json=[{"params": {"project": "fast"}, "body": PROMPT}])
        fast = folded(client.app)
        metrics = client.app.state.metrics  # type: ignore[attr-defined]
    assert fast._found() is not None  # the stack is the expected one: no silent fall-back
    assert first.status_code == 202 and first.json() == {"status": "accepted", "duplicate": False}
    assert again.json() == {"status": "accepted", "duplicate": True}
    assert batch.status_code == 200 and batch.json() == {"results": [{"index": 0, "status": 202}]}
    assert metrics.hook_admissions.labels("accepted")._value.get() == 2  # the batch's item too
    assert metrics.hook_admissions.labels("duplicate")._value.get() == 1
    assert metrics.deliveries.labels("hook", "ok")._value.get() == 2
    assert metrics.deliveries.labels("hook_batch", "ok")._value.get() == 1
    assert stored_keys(data_dir)[:1] == ["k-1"]


def test_host_origin_auth_and_body_cap_answer_as_the_stack_does(data_dir: Path) -> None:
    with app_client(data_dir, server__max_request_bytes="4096") as client:
        token = client.headers["authorization"]
        wrong_host = client.post(HOOK, json=PROMPT, headers={"host": "evil.example"})
        origin = client.post(HOOK, json=PROMPT, headers={"origin": "http://evil.example"})
        missing = client.post(HOOK, json=PROMPT, headers={"authorization": ""})
        bad = client.post(HOOK, json=PROMPT, headers={"authorization": "Bearer nope"})
        key = client.post(HOOK, json=PROMPT, headers={"authorization": "Bearer aim_x_y"})
        two = client.post(
            HOOK,
            json=PROMPT,
            headers=[("authorization", token), ("authorization", token)],
        )
        big = client.post(HOOK, content=b'{"prompt": "' + b"x" * 5000 + b'"}')
        broken = client.post(HOOK, content=b"{nope")
    assert wrong_host.status_code == 421 and wrong_host.json()["error"] == "wrong_host"
    assert origin.status_code == 403 and origin.json()["error"] == "forbidden_origin"
    assert missing.status_code == 401 and missing.json()["message"] == "missing bearer token"
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == 'Bearer realm="ai-memory"'
    assert key.status_code == 401 and "API key not accepted" in key.json()["message"]
    assert two.status_code == 400 and two.json()["error"] == "invalid_request"
    assert big.status_code == 413 and big.json()["error"] == "too_large"
    assert broken.status_code == 400
    assert stored_keys(data_dir) == []


def test_a_revoked_key_is_refused_on_its_next_event_and_the_in_flight_cap_holds(
    tmp_path: Path,
) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    env = clean_env(AI_MEMORY_SERVER__MAX_REQUESTS_IN_FLIGHT="1")
    server = ServerProcess(root, env=env).start()
    try:
        key = make_user(server, "ada")
        with as_user(server, key) as ada:
            before = ada.post(f"{HOOK}&ingest_key=a-1", json=PROMPT)
            revoke_key(server, key)
            after = ada.post(f"{HOOK}&ingest_key=a-2", json=PROMPT)
        head = (
            "PUT /api/v1/projects/default/fast/pages/held.md HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {server.token}\r\nContent-Length: 100\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as holder:
            holder.sendall(head.encode())  # in flight, waiting for its body
            with server.client() as client:
                busy = None
                for _ in range(200):
                    busy = client.post(f"{HOOK}&ingest_key=r-1", json=PROMPT)
                    if busy.status_code == 503:
                        break
    finally:
        server.stop()
    assert before.status_code == 202, before.text
    assert after.status_code == 401, after.text
    assert busy is not None and busy.status_code == 503 and busy.json()["error"] == "busy"
    assert stored_keys(root) == ["a-1"]
