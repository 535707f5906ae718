"""Rate limits on signing in to the web UI, and what they let a guesser write.

The token form is limited per address like the password form; a refused attempt
writes no audit row of its own (one when a limit engages, one with the count when
it lifts); sign-in rows leave the kept page renders valid. In-process apps and
limiters with a clock of their own, so no window has to pass in real time.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.web import signin
from ai_memory.web.graph_cache import changed_paths
from ai_memory.web.render_cache import data_version
from ai_memory.web.signin_limit import Ended, SignInLimiter
from ai_memory.web.webauth import COOKIE_NAME
from tests.hooks_support import app_client
from tests.team_support import sign_in_rows


def test_the_address_limit_counts_across_names_and_ends_with_its_window() -> None:
    now = [1000.0]
    limiter = SignInLimiter(clock=lambda: now[0])
    for n in range(19):
        assert limiter.admit(f"user{n}", "10.0.0.9").wait is None
    assert limiter.retry_after("someone", "10.0.0.9") is None
    assert limiter.admit("user19", "10.0.0.9").wait is None  # counted until it succeeds
    assert limiter.retry_after("someone", "10.0.0.9") == 300
    assert limiter.retry_after("someone", "10.0.0.10") is None
    now[0] += 150
    assert limiter.retry_after("someone", "10.0.0.9") == 150
    now[0] += 150
    assert limiter.retry_after("someone", "10.0.0.9") is None
    for _ in range(5):
        limiter.admit("Grace", "10.0.0.11")
    assert limiter.retry_after("grace", "10.0.0.12") == 300  # a name's count is its own
    limiter.succeeded("grace", "10.0.0.11")
    assert limiter.retry_after("grace", "10.0.0.12") is None


def test_the_token_form_is_limited_per_address_and_its_refusals_write_one_row(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        token = client.headers.pop("Authorization").removeprefix("Bearer ")
        url = "/web/login"
        wrong = [client.get(url, params={"token": f"wrong{n}"}).status_code for n in range(20)]
        refused = [client.get(url, params={"token": "x"}).status_code for _ in range(20)]
        right = client.get(url, params={"token": token}, follow_redirects=False)
        posted = client.post(url, data={"token": token}, follow_redirects=False)
    assert wrong == [401] * 20 and set(refused) == {429}
    assert right.status_code == posted.status_code == 429 and int(right.headers["retry-after"]) > 0
    assert "Too many failed sign-ins" in right.text and COOKIE_NAME not in right.cookies
    with closing(sqlite3.connect(data_dir / "db" / "memory.sqlite")) as conn:
        rows = sign_in_rows(conn)
    assert [d["outcome"] for _, d in rows] == ["wrong_token"] * 20 + ["rate_limited"]
    limited = {"outcome": "rate_limited", "address": "testclient", "limit": "address"}
    assert rows[-1] == ("(unknown)", limited)


def test_a_lifted_limit_reports_how_many_refusals_it_swallowed() -> None:
    now = [0.0]
    limiter = SignInLimiter(clock=lambda: now[0])
    assert all(limiter.admit("ivy", "10.0.1.1").wait is None for _ in range(5))
    first = limiter.admit("ivy", "10.0.1.1")
    assert first.wait == 300 and first.engaged == "name"
    later = [limiter.admit("ivy", f"10.0.2.{n}") for n in range(40)]  # from anywhere
    assert all(a.wait is not None and a.engaged is None for a in later)
    now[0] += 300
    back = limiter.admit("ivy", "10.0.3.1")
    assert back.wait is None and back.ended == (Ended("name", 40),)
    assert limiter.admit("ivy", "10.0.3.1").ended == ()  # reported once
    for _ in range(20):
        limiter.admit(None, "10.0.4.1")  # the token form counts by address alone
    engaged = limiter.admit(None, "10.0.4.1")
    assert engaged.wait == 300 and engaged.engaged == "address"
    assert limiter.admit("ivy", "10.0.4.1").engaged is None  # already reported
    now[0] += 300
    assert limiter.admit(None, "10.0.4.1").ended == (Ended("address", 1),)


def test_the_kept_graph_is_patched_past_sign_in_rows(runtime: Runtime) -> None:
    here = Scope.of(None, "kept-graph")
    runtime.wiki.write_page(here.page("a.md"), "A.")
    before = runtime.readers.read(data_version)
    runtime.writer.call(lambda conn: signin.write_audit(conn, "sign-in", {"outcome": "failed"}))
    assert runtime.readers.read(data_version) == before
    runtime.wiki.write_page(here.page("b.md"), "B links [[a.md]].")

    def changed(conn: sqlite3.Connection) -> set[str] | None:
        return changed_paths(conn, here, before, data_version(conn))

    assert runtime.readers.read(changed) == {"b.md"}
