"""Search through the real server: the HTTP route, raw observation hits, and the CLI."""

from __future__ import annotations

import json

from tests.conftest import ServerProcess, clean_env, run_cli


def put(server: ServerProcess, project: str, path: str, body: str) -> None:
    with server.client() as client:
        url = f"/api/v1/projects/default/{project}/pages/{path}"
        client.put(url, json={"body": body}).raise_for_status()


def test_search_route_cli_and_raw_hits(server: ServerProcess) -> None:
    put(server, "web", "decisions/cache.md", "We cache rendered pages in Redis for five minutes.")
    put(server, "web", "notes/other.md", "Nothing about that here.")
    with server.client() as client:
        ok = client.get("/api/v1/search", params={"q": "redis cache", "project": "web"})
        assert ok.status_code == 200
        body = ok.json()
        assert [h["path"] for h in body["hits"]] == ["decisions/cache.md"]
        assert set(body) >= {"hits", "raw_hits", "global_hits", "scope", "timings"}

        bad = client.get("/api/v1/search", params={"q": "x", "project": "web", "kind": "nope"})
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"
        assert "kind" in bad.json()["message"]
        missing = client.get("/api/v1/search", params={"project": "web"})
        assert missing.status_code == 422
        unscoped = client.get("/api/v1/search", params={"q": "redis"})
        assert unscoped.status_code == 400
        broken = client.get("/api/v1/search", params={"q": '"redis AND (', "project": "web"})
        assert broken.status_code == 200
        assert [h["path"] for h in broken.json()["hits"]] == ["decisions/cache.md"]

        # An open session has observations but no page yet: they come back as raw hits.
        params = {
            "event": "UserPromptSubmit",
            "agent": "claude-code",
            "project": "web",
            "session_id": "open-1",
        }
        prompt = {"session_id": "open-1", "prompt": "Why is the zeppelin build flaky?"}
        assert client.post("/hook", params=params, json=prompt).status_code == 202
        raw = client.get("/api/v1/search", params={"q": "zeppelin", "project": "web"}).json()
        assert raw["hits"] == []
        assert [(r["session_id"], r["kind"]) for r in raw["raw_hits"]] == [
            ("open-1", "user-prompt")
        ]
        assert "zeppelin" in raw["raw_hits"][0]["snippet"]

    env_args = ("--server", server.url, "--project", "web")
    as_json = run_cli("search", "redis cache", *env_args, "--json", data_dir=server.data_dir)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["hits"][0]["path"] == "decisions/cache.md"
    wide = clean_env(COLUMNS="250")
    table = run_cli(
        "search", "redis cache", *env_args, "--explain", data_dir=server.data_dir, env=wide
    )
    assert table.returncode == 0, table.stderr
    assert b"decisions/cache.md" in table.stdout and b"fts#1" in table.stdout
    wrong = run_cli("search", "redis", *env_args, "--kind", "nope", data_dir=server.data_dir)
    assert wrong.returncode == 1 and b"kind" in wrong.stderr
