"""The page PUT answered ahead of FastAPI's router: the same answers, the same errors."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ai_memory.core.page import WriteResult
from ai_memory.web.page_asgi import written
from tests.conftest import ServerProcess, shared_server

PAGES = "/api/v1/projects/default/fastput/pages"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with shared_server(tmp_path_factory, "page-route") as proc:
        yield proc


def test_a_write_answers_the_result_and_is_on_disk_and_readable(server: ServerProcess) -> None:
    with server.client() as client:
        answer = client.put(f"{PAGES}/notes/a.md", json={"body": "# A\n\nsee [[notes/b.md]]"})
        again = client.put(
            f"{PAGES}/notes/a.md",
            content=json.dumps({"body": "# A\n\nsecond", "tags": ["x"]}).encode(),
            headers={"content-type": "application/json; charset=utf-8"},
        )
        page = client.get(f"{PAGES}/notes/a.md").json()
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    first = answer.json()
    assert answer.content == json.dumps(first, separators=(",", ":")).encode()
    assert first == {
        "page_id": first["page_id"],
        "version": 1,
        "workspace": "default",
        "project": "fastput",
        "path": "notes/a.md",
        "changed": True,
        "created": True,
    }
    assert again.status_code == 200 and again.json()["version"] == 2
    assert again.json()["created"] is False
    assert page["body"] == "# A\n\nsecond" and page["tags"] == ["x"]
    on_disk = (server.data_dir / "wiki/default/fastput/notes/a.md").read_text()
    assert on_disk.endswith("second") and "tags:\n- x" in on_disk


def test_preconditions_and_unchanged_writes_answer_as_before(server: ServerProcess) -> None:
    with server.client() as client:
        made = client.put(f"{PAGES}/notes/p.md", json={"body": "one", "create_only": True}).json()
        same = client.put(f"{PAGES}/notes/p.md", json={"body": "one"}).json()
        twice = client.put(f"{PAGES}/notes/p.md", json={"body": "two", "create_only": True})
        stale = client.put(
            f"{PAGES}/notes/p.md", json={"body": "two", "expected_page_id": made["page_id"] + 5}
        )
        moved = client.put(
            f"{PAGES}/notes/p.md", json={"body": "two", "expected_page_id": made["page_id"]}
        )
    assert same["changed"] is False and same["page_id"] == made["page_id"]
    assert twice.status_code == 409 and twice.json()["error"] == "precondition_failed"
    assert stale.status_code == 409 and stale.json()["current_page_id"] == made["page_id"]
    assert moved.status_code == 200 and moved.json()["version"] == 2


def test_bodies_the_model_refuses_get_the_routes_own_answer(server: ServerProcess) -> None:
    """These go on to FastAPI with the body replayed: its 422 names the field it read."""
    cases: list[tuple[bytes, dict[str, str], str]] = [
        (b'{"body": "x", "title": 5}', {}, "title"),
        (b'{"body": "x", "colour": "red"}', {}, "colour"),
        (b'{"body": "x", "kind": "nonsense"}', {}, "kind"),
        (b'{"body": "x", "expected_page_id": 99999999999999999999}', {}, "expected_page_id"),
        (b'["body"]', {}, ""),
        (b'{"body": "x"}', {"content-type": "text/plain"}, ""),
        (b"", {}, "body"),
    ]
    with server.client() as client:
        for raw, headers, named in cases:
            sent = {"content-type": "application/json", **headers}
            answer = client.put(f"{PAGES}/notes/refused.md", content=raw, headers=sent)
            assert answer.status_code == 422, (raw, answer.text)
            payload = answer.json()
            assert payload["error"] == "invalid_request" and named in payload["message"], payload
        missing = client.get(f"{PAGES}/notes/refused.md")
    assert missing.status_code == 404


def test_bad_paths_and_text_are_refused_with_the_domain_error(server: ServerProcess) -> None:
    with server.client() as client:
        bad_name = "/api/v1/projects/default/bad%20name/pages/a.md"
        bad_project = client.put(bad_name, json={"body": "x"})
        bad_path = client.put(f"{PAGES}/a.txt", json={"body": "x"})
        empty_path = client.put(f"{PAGES}/", json={"body": "x"})
        nul = client.put(f"{PAGES}/notes/nul.md", json={"body": "a\x00b"})
    assert bad_project.status_code == 400 and bad_project.json()["error"] == "invalid_identity"
    assert bad_path.status_code == 400 and bad_path.json()["error"] == "invalid_path"
    assert empty_path.status_code == 400 and empty_path.json()["error"] == "invalid_path"
    assert nul.status_code in (400, 422) and nul.json()["error"] == "invalid_request"


def test_a_body_without_a_content_type_is_refused_as_the_route_refuses_it(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        answer = client.put(
            f"{PAGES}/notes/untyped.md",
            content=json.dumps({"body": "no content type"}).encode(),  # httpx sends none
        )
        assert "content-type" not in answer.request.headers
        missing = client.get(f"{PAGES}/notes/untyped.md")
    assert answer.status_code == 422
    assert missing.status_code == 404
    assert not (server.data_dir / "wiki/default/fastput/notes/untyped.md").exists()


def test_the_answer_is_written_as_the_route_encodes_its_result() -> None:
    results = [
        WriteResult(7, 1, "default", "fastput", "notes/a.md", changed=True, created=True),
        WriteResult(2**40, 12, "w", "p", 'caf\u00e9/"quoted"\\ \u2603\n.md', False, False),
    ]
    for result in results:
        route = json.dumps(result.to_dict(), ensure_ascii=False, separators=(",", ":"))
        assert written(result) == route.encode()
