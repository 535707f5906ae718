from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.conftest import ServerProcess, run_cli, run_cli_here


def test_init_creates_the_layout_once(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    first = run_cli("init", data_dir=root)
    assert first.returncode == 0, first.stderr
    for name in ("config.toml", "wiki/.git", "db/memory.sqlite", "spool", "logs", "backups"):
        assert (root / name).exists(), name
    token = root / "auth-tokens/default"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
    assert len(token.read_text().strip()) == 64
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    second = run_cli_here("init", data_dir=root)
    assert second.returncode == 0 and b"nothing changed" in second.stdout
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()} == before


def test_bad_config_stops_with_the_key_and_file(data_dir: Path) -> None:
    (data_dir / "config.toml").write_text("[store]\nreaders = 0\n")
    result = run_cli("status", data_dir=data_dir)
    assert result.returncode == 1
    assert b"store.readers" in result.stderr and b"config.toml" in result.stderr


def test_page_commands_round_trip(server: ServerProcess, tmp_path: Path) -> None:
    common = ("--server", server.url, "--project", "cli")
    body = tmp_path / "body.md"
    body.write_text("# From a file\n\ncontent\n")
    wrote = run_cli(
        "write-page", "decisions/a.md", "--file", str(body), *common, data_dir=server.data_dir
    )
    assert wrote.returncode == 0, wrote.stderr
    piped = run_cli_here(
        "write-page",
        "notes/b.md",
        "--tag",
        "x",
        *common,
        "--json",
        data_dir=server.data_dir,
        input=b"from stdin",
    )
    assert json.loads(piped.stdout)["created"] is True
    read = run_cli_here("read-page", "decisions/a.md", *common, "--json", data_dir=server.data_dir)
    page = json.loads(read.stdout)
    assert page["title"] == "From a file" and page["kind"] == "decision"
    listed = run_cli_here(
        "list-projects", "--server", server.url, "--json", data_dir=server.data_dir
    )
    assert [p["name"] for p in json.loads(listed.stdout)["projects"]] == ["cli"]
    deleted = run_cli_here("delete-page", "notes/b.md", *common, data_dir=server.data_dir)
    assert deleted.returncode == 0
    missing = run_cli_here("read-page", "notes/b.md", *common, data_dir=server.data_dir)
    assert missing.returncode == 1 and b"no page" in missing.stderr
    bad = run_cli_here("write-page", "../x.md", *common, data_dir=server.data_dir, input=b"x")
    assert bad.returncode == 1 and b"climbs out" in bad.stderr
    binary = run_cli_here(
        "write-page", "notes/c.md", *common, data_dir=server.data_dir, input=b"\xff\xfe"
    )
    assert binary.returncode == 1 and b"not UTF-8" in binary.stderr


def test_project_defaults_to_the_checkout(server: ServerProcess, tmp_path: Path) -> None:
    checkout = tmp_path / "clone"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git/config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/api.git\n'
    )
    (checkout / "src").mkdir()
    result = run_cli_here(
        "write-page",
        "notes/x.md",
        "--server",
        server.url,
        "--json",
        data_dir=server.data_dir,
        input=b"hello",
        cwd=checkout / "src",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["project"] == "acme-api"


def test_unreachable_server_is_a_clear_error(data_dir: Path) -> None:
    result = run_cli("list-projects", "--server", "http://127.0.0.1:9", data_dir=data_dir)
    assert result.returncode == 1 and b"cannot reach the server" in result.stderr


def test_lifecycle_commands_refuse_while_a_server_runs(
    server: ServerProcess, tmp_path: Path
) -> None:
    with server.client() as client:
        client.put("/api/v1/projects/default/b/pages/kept.md", json={"body": "kept"})
    reindex = run_cli("reindex", data_dir=server.data_dir)
    assert reindex.returncode == 1 and b"server" in reindex.stderr
    archive = tmp_path / "backup.tar.gz"
    backup = run_cli_here("backup", "--to", str(archive), data_dir=server.data_dir)
    assert backup.returncode == 0, backup.stderr
    restore = run_cli_here("restore", "--from", str(archive), data_dir=server.data_dir)
    assert restore.returncode == 1 and b"server" in restore.stderr
    with server.client() as client:
        client.put("/api/v1/projects/default/b/pages/after.md", json={"body": "after"})
    server.stop()
    config_file = server.data_dir / "config.toml"
    original_config = config_file.read_text()
    config_file.write_text(original_config + "# changed after the backup\n")

    restored = run_cli("restore", "--from", str(archive), data_dir=server.data_dir)
    assert restored.returncode == 0, restored.stderr
    assert config_file.read_text() == original_config
    server.start()
    with server.client() as client:
        assert client.get("/api/v1/projects/default/b/pages/kept.md").json()["body"] == "kept"
        assert client.get("/api/v1/projects/default/b/pages/after.md").status_code == 404
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"not a tarball")
    server.stop()
    refused = run_cli_here("restore", "--from", str(garbage), data_dir=server.data_dir)
    assert refused.returncode == 1 and b"not a readable backup" in refused.stderr
    server.start()
    with server.client() as client:
        assert client.get("/api/v1/projects/default/b/pages/kept.md").json()["body"] == "kept"


def test_serve_refuses_without_a_token(data_dir: Path) -> None:
    (data_dir / "auth-tokens/default").unlink()
    for bind in ("127.0.0.1:9", "0.0.0.0:9"):
        result = run_cli("serve", "--bind", bind, data_dir=data_dir)
        assert result.returncode == 1
        assert b"no bearer token" in result.stderr and b"ai-memory init" in result.stderr
