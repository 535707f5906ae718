"""The page PUT's folded path: every check of the middleware stack still answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from ai_memory.web.hook_fast import HookFast
from ai_memory.web.page_fast import PageFast
from tests.conftest import ServerProcess, clean_env
from tests.hooks_support import app_client
from tests.team_support import as_user, grant, make_user, restrict, revoke_key

PAGE = "/api/v1/projects/default/fast/pages/notes/a.md"
BODY = {"body": "# A\n\nhello", "title": "A"}


def layer(app: Any, kind: type[Any]) -> Any:
    found = app.middleware_stack
    while not isinstance(found, kind):
        found = found.app
    return found


def page_file(data_dir: Path) -> Path:
    return next((data_dir / "wiki").rglob("a.md"), data_dir / "wiki" / "missing")


def test_a_page_put_takes_the_folded_path_and_the_hook_routes_keep_theirs(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        written = client.put(PAGE, json=BODY)
        again = client.put(PAGE, json=BODY)
        read = client.get(PAGE)
        page_fast, hook_fast = layer(client.app, PageFast), layer(client.app, HookFast)
    assert page_fast._found() is not None  # the stack is the expected one: no silent fall-back
    assert hook_fast._found() is not None
    assert written.status_code == 200 and written.json()["created"] is True, written.text
    assert again.json()["changed"] is False
    assert read.status_code == 200 and "hello" in read.text
    assert page_file(data_dir).read_text().endswith("hello")


def test_host_origin_auth_and_body_cap_answer_as_the_stack_does(data_dir: Path) -> None:
    with app_client(data_dir, server__max_request_bytes="4096") as client:
        token = client.headers["authorization"]
        wrong_host = client.put(PAGE, json=BODY, headers={"host": "evil.example"})
        origin = client.put(PAGE, json=BODY, headers={"origin": "http://evil.example"})
        missing = client.put(PAGE, json=BODY, headers={"authorization": ""})
        bad = client.put(PAGE, json=BODY, headers={"authorization": "Bearer nope"})
        key = client.put(PAGE, json=BODY, headers={"authorization": "Bearer aim_x_y"})
        two = client.put(
            PAGE, json=BODY, headers=[("authorization", token), ("authorization", token)]
        )
        big = client.put(PAGE, json={"body": "x" * 5000})
        broken = client.put(PAGE, content=b"{nope", headers={"content-type": "application/json"})
    assert wrong_host.status_code == 421 and wrong_host.json()["error"] == "wrong_host"
    assert origin.status_code == 403 and origin.json()["error"] == "forbidden_origin"
    assert missing.status_code == 401 and missing.json()["message"] == "missing bearer token"
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == 'Bearer realm="ai-memory"'
    assert key.status_code == 401 and "API key not accepted" in key.json()["message"]
    assert two.status_code == 400 and two.json()["error"] == "invalid_request"
    assert big.status_code == 413 and big.json()["error"] == "too_large"
    assert broken.status_code == 422, broken.text  # the route's own answer
    assert not page_file(data_dir).exists()


def test_a_key_writes_only_where_granted_and_not_once_revoked(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    server = ServerProcess(root, env=clean_env()).start()
    try:
        with server.client() as admin:
            admin.put(PAGE, json={"body": "seed"}).raise_for_status()
        restrict(server, "default", "fast")
        key = make_user(server, "ada")
        with as_user(server, key) as ada:
            refused = ada.put(PAGE, json=BODY)
            grant(server, "default", "fast", "ada", "write")
            allowed = ada.put(PAGE, json=BODY)
            revoke_key(server, key)
            after = ada.put(PAGE, json={"body": "late"})
    finally:
        server.stop()
    assert refused.status_code == 403 and refused.json()["error"] == "forbidden", refused.text
    assert allowed.status_code == 200 and allowed.json()["changed"] is True, allowed.text
    assert after.status_code == 401, after.text
    assert page_file(root).read_text().endswith("hello")


def test_a_large_body_is_decoded_off_the_loop_with_the_same_answers(data_dir: Path) -> None:
    # Over SMALL_JSON_BYTES the body is decoded on a worker thread: written the same,
    # and refused in the route's own words when it does not validate.
    body = "# A\n\n" + "long line of notes, " * 4000
    with app_client(data_dir) as client:
        written = client.put(PAGE, json={"body": body, "tags": ["x"]})
        invalid = client.put(PAGE, json={"body": body, "tags": [[]] * 5000})
    assert written.status_code == 200 and written.json()["created"] is True, written.text
    assert body.strip()[-60:] in page_file(data_dir).read_text()
    assert invalid.status_code == 422, invalid.text
    assert invalid.json()["error"] == "invalid_request"
    assert "tags" in invalid.json()["message"]


def test_a_path_holding_a_control_character_is_refused_before_any_route(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        newline = client.put(PAGE + "%0A", json=BODY)
        deleted = client.delete(PAGE + "%0a")
        tab = client.get("/api/v1/projects/default/fast/pages/notes%09a.md")
        plain = client.put(PAGE, json=BODY)
    for refused in (newline, deleted, tab):
        assert refused.status_code == 400, refused.text
        assert refused.json() == {
            "error": "invalid_request",
            "message": "the request path holds a control character",
        }
    assert plain.status_code == 200 and plain.json()["version"] == 1  # nothing written before
