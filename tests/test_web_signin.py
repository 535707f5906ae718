"""Signing in to the web UI with a user's password: sessions, CSRF, rate limits, audit.

One server for the module; the first test is the install before anyone has a
password (the token signs in), and sets the first one. The tests after it
each sign in as a user of their own.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.core.clock import iso, now_iso, utc_now
from ai_memory.maintenance.init import initialise
from ai_memory.runtime import Runtime
from ai_memory.store import passwords, web_sessions
from ai_memory.web.render_cache import data_version
from ai_memory.web.webauth import COOKIE_NAME, cookie_for
from tests.conftest import ServerProcess, clean_env, run_cli
from tests.mcp_support import module_server
from tests.team_support import (
    _ok,
    as_user,
    cli_in_process,
    make_user,
    set_password,
    sign_in_rows,
    web_sign_in,
)

LOGIN = "/web/login"
FIRST = "first-admin"
FIRST_PASSWORD = "correct horse battery"
SECRETS: list[str] = [FIRST_PASSWORD]  # every password and cookie value the tests use


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


def person(server: ServerProcess, name: str, admin: bool = False) -> str:
    """A user with a password of their own (a secret the last test looks for)."""
    password = f"pw-of-{name}-0123"
    SECRETS.append(password)
    make_user(server, name, admin=admin)
    set_password(server, name, password)
    return password


def signed_in(server: ServerProcess, name: str, password: str) -> httpx.Client:
    client = web_sign_in(server, name, password)
    SECRETS.append(client.cookies[COOKIE_NAME])
    return client


def db(server: ServerProcess) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{server.data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', page.text)
    assert found is not None, page.text
    return found.group(1)


def test_the_token_signs_in_until_the_first_password_then_only_machines_use_it(
    server: ServerProcess,
) -> None:
    url = server.url + "/web/login"
    before = httpx.get(url, params={"token": server.token}, timeout=10)
    assert before.status_code == 303 and cookie_for(server.token) in before.headers["set-cookie"]
    token_cookie = {"Cookie": f"{COOKIE_NAME}={cookie_for(server.token)}"}
    assert httpx.get(server.url + "/web", headers=token_cookie, timeout=10).status_code == 200
    assert 'name="token"' in httpx.get(url, timeout=10).text
    setup = server.url + "/web/setup"
    fields = {"name": "mallory", "password": "x" * 12, "again": "x" * 12}
    forged = httpx.post(setup, data=fields, headers=token_cookie, timeout=10)
    assert forged.status_code == 403 and "out of date" in forged.text
    with server.client() as root:
        assert root.get("/admin/users").json()["users"] == []

    first = ("user", "add", FIRST, "--admin", "--password-stdin", "--server", server.url)
    done = run_cli(*first, data_dir=server.data_dir, input=FIRST_PASSWORD.encode() + b"\n")
    assert done.returncode == 0, done.stderr.decode()

    form = httpx.get(url, timeout=10)
    assert 'name="name"' in form.text and 'name="token"' not in form.text
    for refused in (
        httpx.get(url, params={"token": server.token}, timeout=10),
        httpx.post(url, data={"token": server.token}, timeout=10),
    ):
        assert refused.status_code == 401 and COOKIE_NAME + "=" not in str(refused.headers)
        assert "no longer signs in here" in refused.text
    old_cookie = httpx.get(server.url + "/web", headers=token_cookie, timeout=10)
    assert old_cookie.status_code == 303  # the token's old cookie is retired with it
    with server.client() as machine:
        assert machine.get("/api/v1/status").status_code == 200
    with closing(signed_in(server, FIRST, FIRST_PASSWORD)) as browser:
        assert 'id="projects"' in browser.get("/web").text
        done_already = browser.get("/web/setup")
    assert done_already.status_code == 403 and "first account exists" in done_already.text


def test_a_session_is_a_random_cookie_stored_only_as_a_hash_for_seven_days(
    server: ServerProcess,
) -> None:
    password = person(server, "alice")
    client = httpx.Client(base_url=server.url, timeout=10)
    form = client.get("/web/login", params={"next": "/web/health"})
    answer = client.post(
        "/web/login",
        data={"name": "alice", "password": password, "csrf": csrf_of(form), "next": "/web/health"},
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/web/health"
    cookie = next(c for c in answer.headers.get_list("set-cookie") if c.startswith(COOKIE_NAME))
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path=/web", "samesite=strict"} <= attributes
    assert "secure" not in attributes  # plain http on loopback; https adds it
    behind_tls = httpx.get(  # a TLS proxy on this machine says the page came over https
        server.url + "/web/login", headers={"X-Forwarded-Proto": "https"}, timeout=10
    )
    assert "secure" in behind_tls.headers["set-cookie"].lower().split("; ")
    value = client.cookies[COOKIE_NAME]
    SECRETS.append(value)
    assert client.get("/web").status_code == 200
    with db(server) as conn:
        rows = conn.execute(
            "SELECT s.* FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.name = ?",
            ("alice",),
        ).fetchall()
        hashes = [r["password_hash"] for r in conn.execute("SELECT password_hash FROM users")]
    assert [r["id_hash"] for r in rows] == [hashlib.sha256(value.encode()).hexdigest()]
    lifetime = _moment(rows[0]["expires_at"]) - _moment(rows[0]["created_at"])
    assert lifetime == timedelta(days=7)
    assert all(h.startswith("$argon2id$") for h in hashes if h)
    dump = (server.data_dir / "db" / "memory.sqlite").read_bytes()
    assert value.encode() not in dump and password.encode() not in dump

    again = client.post(
        "/web/login",
        data={"name": "alice", "password": password, "csrf": csrf_of(client.get("/web/login"))},
    )
    assert again.status_code == 303 and client.cookies[COOKIE_NAME] != value
    SECRETS.append(client.cookies[COOKIE_NAME])
    old = httpx.get(server.url + "/web", cookies={COOKIE_NAME: value}, timeout=10)
    assert old.status_code == 303  # signing in again ended the session it replaced
    client.close()


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_a_sign_in_without_its_form_token_or_from_elsewhere_is_refused(
    server: ServerProcess,
) -> None:
    password = person(server, "forger-target")
    url = server.url + "/web/login"
    bare = httpx.post(url, data={"name": "forger-target", "password": password}, timeout=10)
    assert bare.status_code == 403 and "out of date" in bare.text
    with httpx.Client(base_url=server.url, timeout=10) as client:
        csrf = csrf_of(client.get("/web/login"))
        wrong = client.post(
            "/web/login", data={"name": "forger-target", "password": password, "csrf": "0" * 64}
        )
        foreign = client.post(
            "/web/login",
            data={"name": "forger-target", "password": password, "csrf": csrf},
            headers={"Origin": "http://evil.example"},
        )
        assert wrong.status_code == 403 and foreign.status_code == 403
        assert COOKIE_NAME not in client.cookies


def test_a_wrong_password_an_unknown_name_or_a_disabled_user_gets_the_same_answer(
    server: ServerProcess,
) -> None:
    password = person(server, "bob")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        csrf = csrf_of(client.get("/web/login"))
        answers = [
            client.post("/web/login", data={"name": n, "password": p, "csrf": csrf})
            for n, p in (("bob", "not-bobs-pass"), ("nobody-here", password))
        ]
    assert [a.status_code for a in answers] == [401, 401]
    assert all("do not match" in a.text for a in answers)
    browser = signed_in(server, "bob", password)
    with server.client() as root:
        _ok(root.post("/admin/users/bob/disable"))
        assert browser.get("/web").status_code == 303  # the session ended on the next request
        _ok(root.post("/admin/users/bob/enable"))
    assert browser.get("/web").status_code == 303  # and enabling does not bring it back
    browser.close()


def test_a_password_reset_ends_the_sessions_and_only_the_new_password_works(
    server: ServerProcess,
) -> None:
    old = person(server, "carol")
    browser = signed_in(server, "carol", old)
    new = "carols-new-password"
    SECRETS.append(new)
    reset = ("user", "passwd", "carol", "--password-stdin", "--server", server.url)
    reset += ("--data-dir", str(server.data_dir))  # in process: the first test's is real
    done = cli_in_process(*reset, env=clean_env(), stdin=new.encode() + b"\n")
    assert done.returncode == 0, done.stderr
    assert "web session(s) ended" in done.stdout
    assert browser.get("/web").status_code == 303
    with pytest.raises(AssertionError):
        web_sign_in(server, "carol", old)
    signed_in(server, "carol", new).close()
    short = cli_in_process(*reset, env=clean_env(), stdin=b"short\n")
    assert short.returncode == 1 and "at least 8 characters" in short.stderr
    browser.close()


def test_only_an_admin_sets_passwords(server: ServerProcess) -> None:
    key = make_user(server, "dave")
    with as_user(server, key) as dave:
        refused = dave.put("/admin/users/dave/password", json={"password": "daves-own-choice"})
    assert refused.status_code == 403
    with server.client() as root:
        unknown = root.put("/admin/users/nobody/password", json={"password": "whatever-1234"})
        weak = root.put("/admin/users/dave/password", json={"password": "x"})
    assert unknown.status_code == 404 and weak.status_code == 400


def test_sign_out_deletes_the_session_and_needs_its_form_token(server: ServerProcess) -> None:
    password = person(server, "erin")
    browser = signed_in(server, "erin", password)
    value = browser.cookies[COOKIE_NAME]
    page = browser.get("/web/logout")
    assert page.status_code == 200 and 'action="/web/logout"' in page.text
    assert browser.post("/web/logout", data={"csrf": "nope"}).status_code == 403
    assert browser.get("/web").status_code == 200  # a forged sign-out changed nothing
    out = browser.post("/web/logout", data={"csrf": csrf_of(page)})
    assert out.status_code == 303 and out.headers["location"] == "/web/login"
    stale = httpx.get(server.url + "/web", cookies={COOKIE_NAME: value}, timeout=10)
    assert stale.status_code == 303
    with db(server) as conn:
        gone = conn.execute(
            "SELECT count(*) FROM web_sessions WHERE id_hash = ?",
            (web_sessions.id_hash(value),),
        ).fetchone()[0]
    assert gone == 0
    browser.close()


def test_repeated_failures_for_a_name_are_answered_429_with_retry_after(
    server: ServerProcess,
) -> None:
    password = person(server, "frank")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        csrf = csrf_of(client.get("/web/login"))
        wrong = {"name": "frank", "password": "guess-guess", "csrf": csrf}
        codes = [client.post("/web/login", data=wrong).status_code for _ in range(5)]
        limited = client.post("/web/login", data={**wrong, "password": password})
    assert codes == [401] * 5
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert "Too many failed sign-ins" in limited.text
    signed_in(server, "alice", known(server, "alice")).close()  # other names still sign in


def known(server: ServerProcess, name: str) -> str:
    """``name``'s password: the user is made here when the test that makes them did not run."""
    with server.client() as root:
        names = {user["name"] for user in root.get("/admin/users").json()["users"]}
    return f"pw-of-{name}-0123" if name in names else person(server, name)


def test_sessions_expire_and_end_with_the_user(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}), embed=False, search=False)
    try:

        def setup(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO users(name, admin, created_at) VALUES ('h', 0, ?)", (now,))
            passwords.set_password(conn, "h", passwords.hash_password("h-password"), now=now)
            web_sessions.create(conn, 1, "stale", at=utc_now() - timedelta(days=7, seconds=1))
            web_sessions.create(conn, 1, "fresh")

        now = now_iso()
        runtime.writer.call(setup)
        found = runtime.readers.read(lambda c: web_sessions.principal_for(c, "fresh", now_iso()))
        stale = runtime.readers.read(lambda c: web_sessions.principal_for(c, "stale", now_iso()))
        assert found is not None and found.name == "h" and not found.admin and stale is None
        assert runtime.readers.read(passwords.any_password)
        later = iso(utc_now() + timedelta(days=7, seconds=1))
        assert runtime.readers.read(lambda c: web_sessions.principal_for(c, "fresh", later)) is None
        ended = runtime.writer.call(lambda c: web_sessions.drop_for_user(c, 1))
        assert ended == 1  # the stale row went when the fresh one was made
    finally:
        runtime.stop()


def test_no_password_or_cookie_reaches_the_audit_log_or_the_server_log(
    server: ServerProcess,
) -> None:
    for tell in story(audit_outcomes(server)):  # run alone: first what the tests above do
        tell(server)
    with db(server) as conn:
        everything = "\n".join(
            " ".join(str(v) for v in row) for row in conn.execute("SELECT * FROM audit_log")
        )
    outcomes = audit_outcomes(server)
    assert {
        ("root", "sign-in", "ok"),
        ("(unknown)", "sign-in", "token_retired"),
        (FIRST, "sign-in", "ok"),
        ("bob", "sign-in", "failed"),
        ("(unknown)", "sign-in", "failed"),
        ("frank", "sign-in", "rate_limited"),
        ("erin", "sign-out", None),
        ("root", "user-passwd", None),
    } <= outcomes
    assert "nobody-here" not in everything  # an unknown name may be a mistyped password
    log = (server.data_dir / "test-server.log").read_text(errors="replace")
    for secret in SECRETS:
        assert secret not in everything and secret not in log


def audit_outcomes(server: ServerProcess) -> set[tuple[str, str, str | None]]:
    with db(server) as conn:
        rows = conn.execute(
            "SELECT user_name, action, detail FROM audit_log WHERE action IN "
            "('sign-in', 'sign-out', 'user-passwd') ORDER BY id"
        ).fetchall()
    return {(r["user_name"], r["action"], _outcome(r["detail"])) for r in rows}


def story(seen: set[tuple[str, str, str | None]]) -> list[Callable[[ServerProcess], None]]:
    """The tests above whose audit rows the module's last look needs, where none are there."""
    tellers = [
        (
            ("root", "sign-in", "ok"),
            test_the_token_signs_in_until_the_first_password_then_only_machines_use_it,
        ),
        (
            ("bob", "sign-in", "failed"),
            test_a_wrong_password_an_unknown_name_or_a_disabled_user_gets_the_same_answer,
        ),
        (
            ("frank", "sign-in", "rate_limited"),
            test_repeated_failures_for_a_name_are_answered_429_with_retry_after,
        ),
        (("erin", "sign-out", None), test_sign_out_deletes_the_session_and_needs_its_form_token),
    ]
    return [tell for outcome, tell in tellers if outcome not in seen]


def _outcome(detail: str) -> str | None:
    found = json.loads(detail).get("outcome")
    return str(found) if found is not None else None


# What a guesser can make the server write: no more rows than the limits let attempts in
# (more in test_web_signin_limits.py).


def newest_row(server: ServerProcess) -> int:
    with db(server) as conn:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM audit_log").fetchone()[0])


def from_address(server: ServerProcess, address: str) -> httpx.Client:
    """A browser at ``address``, as a proxy on this machine reports it (X-Forwarded-For)."""
    return httpx.Client(base_url=server.url, timeout=30, headers={"X-Forwarded-For": address})


def test_a_limited_name_writes_one_row_however_many_attempts_it_refuses(
    server: ServerProcess,
) -> None:
    person(server, "gina")
    before = newest_row(server)
    with from_address(server, "10.20.0.1") as client:
        wrong = {"name": "gina", "password": "not-ginas-pass", "csrf": csrf_of(client.get(LOGIN))}
        codes = [client.post(LOGIN, data=wrong).status_code for _ in range(60)]
    assert codes == [401] * 5 + [429] * 55
    with db(server) as conn:
        rows = sign_in_rows(conn, before)
    assert [(user, d["outcome"]) for user, d in rows] == [("gina", "failed")] * 5 + [
        ("gina", "rate_limited")
    ]
    assert rows[-1][1] == {"outcome": "rate_limited", "address": "10.20.0.1", "limit": "name"}


def test_concurrent_guesses_get_no_more_tries_than_one_after_another(
    server: ServerProcess,
) -> None:
    person(server, "hank")
    with from_address(server, "10.20.0.2") as client:
        wrong = {"name": "hank", "password": "not-hanks-pass", "csrf": csrf_of(client.get(LOGIN))}
        with ThreadPoolExecutor(12) as pool:
            codes = list(pool.map(lambda _: client.post(LOGIN, data=wrong).status_code, range(12)))
    assert sorted(codes) == [401] * 5 + [429] * 7


def test_sign_ins_leave_the_kept_page_renders_valid(server: ServerProcess) -> None:
    password = known(server, "alice")
    with server.client() as root:
        _ok(root.put("/api/v1/projects/default/kept/pages/index.md", json={"body": "# Kept"}))
    with db(server) as conn:
        version = data_version(conn)
    with from_address(server, "10.20.0.3") as client:
        wrong = {"name": "nobody", "password": "whatever-1", "csrf": csrf_of(client.get(LOGIN))}
        assert client.post(LOGIN, data=wrong).status_code == 401
    signed_in(server, "alice", password).close()
    with db(server) as conn:
        assert data_version(conn) == version and newest_row(server) > version[0]
