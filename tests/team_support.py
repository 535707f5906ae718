"""Users, keys and project access for tests, through a running server's admin API.

Every helper acts with the server's root token (``ServerProcess.client()``), the way
an operator would: ``make_user`` returns a fresh API key for the new user, which
``as_user`` turns into a client that authenticates as them.

    key = make_user(server, "alice")
    with as_user(server, key) as alice:
        alice.put("/api/v1/projects/default/p/pages/a.md", json={"body": "x"})
    restrict(server, "default", "p")
    grant(server, "default", "p", "bob", "read")
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import httpx

from tests.conftest import ServerProcess


def cli_in_process(
    *args: str, env: Mapping[str, str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real command line's entry (``run_app``: its parsing, its error lines and exit
    codes) in this process, in ``env`` alone: a subprocess costs a second or more of start-up
    per command, which only a test of the installed entry point needs to pay."""
    from click.testing import CliRunner

    from ai_memory.cli.app import run_app

    only = {**{name: None for name in os.environ if name not in env}, **env}
    argv = sys.argv
    with CliRunner().isolation(input=stdin, env=only) as (stdout, stderr, _):
        sys.argv = ["ai-memory", *args]
        try:
            run_app()
            code: int = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if isinstance(exc.code, str):  # as the interpreter prints it
                print(exc.code, file=sys.stderr)
        finally:
            sys.argv = argv
            sys.stdout.flush()  # plain writes wait in the wrapper's buffer
            sys.stderr.flush()
        shown = stdout.getvalue().decode(), stderr.getvalue().decode()
    return subprocess.CompletedProcess(["ai-memory", *args], code, *shown)


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.is_success, (response.request.url, response.status_code, response.text)
    data: dict[str, Any] = response.json()
    return data


def make_user(server: ServerProcess, name: str, admin: bool = False, label: str = "test") -> str:
    """Create user ``name`` and return a new API key for them."""
    with server.client() as root:
        _ok(root.post("/admin/users", json={"name": name, "admin": admin}))
    return make_key(server, name, label)


def make_key(server: ServerProcess, user: str, label: str = "test") -> str:
    """A new API key for an existing user (the full key, shown once)."""
    with server.client() as root:
        return str(_ok(root.post("/admin/api-keys", json={"user": user, "label": label}))["key"])


def revoke_key(server: ServerProcess, key: str) -> None:
    """Revoke a key by its prefix (the part between ``aim_`` and the second ``_``)."""
    prefix = key.split("_")[1]
    with server.client() as root:
        _ok(root.post(f"/admin/api-keys/{prefix}/revoke"))


def disable_user(server: ServerProcess, name: str) -> None:
    with server.client() as root:
        _ok(root.post(f"/admin/users/{name}/disable"))


def as_user(server: ServerProcess, key: str, timeout: float = 30.0) -> httpx.Client:
    """A client that authenticates with ``key`` instead of the root token."""
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout
    )


def make_project(
    server: ServerProcess, workspace: str, project: str, key: str | None = None
) -> None:
    """Create a project by writing its ``index.md``: as the key's user (its creator) or root."""
    url = f"/api/v1/projects/{workspace}/{project}/pages/index.md"
    client = as_user(server, key) if key else server.client()
    with client:
        _ok(client.put(url, json={"body": f"# {project}\n"}))


def set_visibility(server: ServerProcess, workspace: str, project: str, visibility: str) -> None:
    """Make an existing project ``open`` or ``restricted``."""
    with server.client() as root:
        _ok(
            root.put(
                f"/admin/projects/{workspace}/{project}/access", json={"visibility": visibility}
            )
        )


def restrict(server: ServerProcess, workspace: str, project: str) -> None:
    set_visibility(server, workspace, project, "restricted")


def grant(server: ServerProcess, workspace: str, project: str, user: str, access: str) -> None:
    """Give ``user`` ``read`` or ``write`` on a project."""
    with server.client() as root:
        _ok(
            root.put(
                f"/admin/projects/{workspace}/{project}/grants/{user}", json={"access": access}
            )
        )


def revoke_grant(server: ServerProcess, workspace: str, project: str, user: str) -> None:
    with server.client() as root:
        _ok(root.delete(f"/admin/projects/{workspace}/{project}/grants/{user}"))


def project_access(server: ServerProcess, workspace: str, project: str) -> dict[str, Any]:
    """The project's rule and grants as the admin API shows them."""
    with server.client() as root:
        return _ok(root.get(f"/admin/projects/{workspace}/{project}/access"))


def set_password(server: ServerProcess, name: str, password: str) -> None:
    """Give ``name`` a web sign-in password (the first one retires the token sign-in)."""
    with server.client() as root:
        _ok(root.put(f"/admin/users/{name}/password", json={"password": password}))


def web_sign_in(server: ServerProcess, name: str, password: str) -> httpx.Client:
    """A client signed in to /web as a browser is: the form's CSRF cookie, then the session."""
    client = httpx.Client(base_url=server.url, timeout=30)
    form = client.get("/web/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert csrf is not None, form.text
    answer = client.post(
        "/web/login", data={"name": name, "password": password, "csrf": csrf.group(1)}
    )
    assert answer.status_code == 303, (answer.status_code, answer.text)
    return client


def sign_in_rows(conn: sqlite3.Connection, after: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The ``sign-in`` audit rows after row ``after``: (user name, detail)."""
    rows = conn.execute(
        "SELECT user_name, detail FROM audit_log WHERE action = 'sign-in' AND id > ? ORDER BY id",
        (after,),
    )
    return [(r[0], json.loads(r[1])) for r in rows]
