"""``ai-memory export``: a plain markdown bundle another tool reads, with or without a server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ServerProcess, run_cli, run_cli_here
from tests.hygiene_sessions_support import API, SECRET, SHOP, populate


def export(data_dir: Path, *args: str) -> dict[str, object]:
    done = run_cli_here("export", *args, "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, object] = json.loads(done.stdout)
    return result


def write_one_page(data_dir: Path) -> None:
    """acme-api with one page, written through a server that is stopped again."""
    server = ServerProcess(data_dir).start()
    try:
        with server.client() as client:
            page = {"body": "# Rate limits\n\nTokens refill every second."}
            assert client.put(f"/api/v1/projects/default/{API}/pages/concepts/limits.md", json=page)
    finally:
        server.stop()


def test_export_writes_pages_as_on_disk_and_an_index(server: ServerProcess, tmp_path: Path) -> None:
    populate(server, tmp_path)
    wiki = server.data_dir / "wiki" / "default" / SHOP
    bundle = tmp_path / "bundle"
    dry = export(server.data_dir, "--project", SHOP, "--to", str(bundle), "--dry-run")
    assert not bundle.exists()
    done = export(server.data_dir, "--project", SHOP, "--to", str(bundle))
    assert done["files"] == dry["files"] and done["pages"] == dry["pages"]
    written = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file())
    assert written == sorted(str(f) for f in done["files"])  # type: ignore[union-attr]
    assert "pages/sessions/s-wrong.md" in written and "pages/concepts/coupons.md" in written
    for name in written:
        if name.startswith("pages/"):
            assert (bundle / name).read_bytes() == (wiki / name.removeprefix("pages/")).read_bytes()
    page = (bundle / "pages" / "sessions" / "s-wrong.md").read_text()
    assert page.startswith("---\n") and "kind: session" in page and SECRET in page
    index = (bundle / "index.md").read_text()
    assert "| Title | Kind | Path | Updated |" in index
    assert "[concepts/coupons.md](pages/concepts/coupons.md)" in index
    assert "| Coupons | concept |" in index
    assert index.count("\n| ") == 2 + len(done["pages"])  # type: ignore[arg-type]


def test_export_refuses_a_non_empty_folder_and_unknown_projects(
    data_dir: Path, tmp_path: Path
) -> None:
    """Without a server: the index is read read-only, nothing in the data dir changes."""
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    unknown = run_cli("export", "--project", "nope", "--to", str(tmp_path / "x"), data_dir=data_dir)
    assert unknown.returncode == 1 and b"no project default/nope" in unknown.stderr
    assert not (tmp_path / "x").exists()
    write_one_page(data_dir)
    refused = run_cli("export", "--project", API, "--to", str(full), data_dir=data_dir)
    assert refused.returncode == 1 and b"is not empty; pass --force" in refused.stderr
    assert sorted(p.name for p in full.iterdir()) == ["notes.txt"]
    done = export(data_dir, "--project", API, "--to", str(full), "--force")
    assert done["files"] == ["index.md", "pages/concepts/limits.md"]
    assert (full / "notes.txt").read_text() == "mine"
    assert "Tokens refill every second." in (full / "pages" / "concepts" / "limits.md").read_text()


def test_export_refuses_a_folder_inside_the_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """A bundle written into the wiki would be indexed as pages of its own: refused, also
    through a symlink, and nothing is written."""
    write_one_page(data_dir)
    inside = data_dir / "wiki" / "default" / API / "bundle"
    link = tmp_path / "link"
    link.symlink_to(data_dir / "wiki")
    for target in (inside, link / "out", data_dir):
        done = run_cli(
            "export", "--project", API, "--to", str(target), "--force", data_dir=data_dir
        )
        assert done.returncode == 1, done.stdout
        assert b"inside the data dir" in done.stderr
    assert not inside.exists() and not (data_dir / "wiki" / "out").exists()
    assert not (data_dir / "index.md").exists()
    afile = tmp_path / "afile"
    afile.write_text("mine")
    under = run_cli("export", "--project", API, "--to", str(afile / "sub"), data_dir=data_dir)
    assert under.returncode == 1 and b"Traceback" not in under.stderr
    assert f"{afile} is a file".encode() in under.stderr and afile.read_text() == "mine"
