"""The one-scan redactor gives exactly what one pass per pattern gives, on secrets and prose;
an event parsed in place (nothing to redact) is the one a worker thread would parse."""

from __future__ import annotations

import json
import random

import pytest

from ai_memory.core.errors import InvalidInput
from ai_memory.hooks.ingest import IN_PLACE_BYTES, parse_event, parse_in_place
from ai_memory.hooks.redactor import Redactor
from ai_memory.hooks.sanitize import Sanitizer
from tests.secrets_corpus import CORPUS

ORDINARY = [
    "make test 1",
    "ok " * 40,
    "refactor the writer queue and add a benchmark",
    "def handle(event: dict[str, str]) -> None:  # token count 3\n    return 3\n",
    "the key = value of the disk task <div> -u user and --password-less login",
    "Ünïcödé text, 日本語のテキスト, emoji 🙂 and a lone surrogate \ud800 here",
    "https://example.com/a/b?c=d#e and git@github.com:acme/api.git",
    json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls -la"}, "stdout": "x" * 300}),
]

# Secrets that sit next to, inside or across one another: one pattern's replacement is the
# next one's input, which is where a single scan could differ from passes in turn.
ENTANGLED = [
    "password = sk-proj-abcdefghijklmnopqrstuvwx and token: ghp_abcdefghijklmnopqrstuvwxyz0123",
    "https://user:sk-abcdefghijklmnopqrstu@db.example.com/x?sig=abcdefghijklmnop",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
    '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----"}',
    "<token>-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----</token>",
    "mysql -u root -phunter2 --password=sk-abcdefghijklmnopqrstuvwx db",
    "docker login -u me -p dckr_pat_abcdefghijklmnopqrstuvwx registry",
    "login me password AKIAABCDEFGHIJKLMNOP machine example.com",
    "api_key='xoxb-1234567890-abcdefghij' secret=\"whsec_abcdefghijklmnopqrstuvwxyz\"",
    "curl -u admin:sk-abcdefghijklmnopqrstuvwx https://hooks.slack.com/services/T0/B0/abcdefghijklmnopqrst",
]


def _hostile(rng: random.Random) -> str:
    """Random text drawn from the characters the patterns care about."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :=\"'/@-_.<>\\\n"
    parts = [rng.choice(("token", "key", "sk-", "-----BEGIN", "://", "Bearer ", "-p", "sig="))]
    parts.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(10, 200))))
    return "".join(rng.sample(parts, len(parts)))


def _texts() -> list[str]:
    rng = random.Random(15)
    texts = [*ORDINARY, *ENTANGLED]
    for _, text, _ in CORPUS:
        texts += [text, f"{text} then {text}", text.upper(), text.lower()]
    texts += [" ".join(rng.choice(CORPUS)[1] for _ in range(4)) for _ in range(40)]
    texts += [_hostile(rng) for _ in range(300)]
    return texts


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


def test_one_scan_matches_one_pass_per_pattern(redactor: Redactor) -> None:
    for text in _texts():
        assert redactor.redact(text) == redactor.redact_each(text), text


def test_secrets_are_still_redacted(redactor: Redactor) -> None:
    for family, text, needle in CORPUS:
        assert needle not in redactor.redact(text), family
    for text in ORDINARY[:5]:
        assert redactor.redact(text) == text
        assert not redactor.holds_secret(text)


def test_configured_patterns_join_the_scan() -> None:
    configured = Redactor([r"ACME-(?P<v>[0-9]{6})", r"(?i)internal\s+build\s+\d+"])
    text = "deploy ACME-123456 on Internal  Build 42 with token=abcdefgh"
    assert configured.redact(text) == configured.redact_each(text)
    assert "123456" not in configured.redact(text)
    assert "Build 42" not in configured.redact(text)
    assert Redactor().redact(text).startswith("deploy ACME-123456")


def test_a_set_too_large_for_its_memory_falls_back_to_passes() -> None:
    small = Redactor(scan_memory=1 << 16)
    for text in [*ENTANGLED, *ORDINARY]:
        assert small.redact(text) == small.redact_each(text)


def _event(text: str) -> dict[str, object]:
    return {
        "session_id": "s-1",
        "tool_name": "Bash",
        "tool_input": {"command": f"make test && echo {text}", "file_path": "/srv/app/x.py"},
        "tool_response": {"stdout": f"ok {text}\x1b[0m done"},
    }


def test_an_event_parsed_in_place_is_the_one_a_worker_parses() -> None:
    sanitizer = Sanitizer()
    params = {"project": "p", "agent": "claude-code", "event": "PostToolUse"}
    for text in ORDINARY:
        body = _event(text)
        in_place = parse_in_place(params, body, sanitizer, len(json.dumps(body)))
        assert in_place == parse_event(params, body, sanitizer)


def test_an_event_with_anything_to_redact_is_left_to_a_worker() -> None:
    sanitizer = Sanitizer()
    params = {"project": "p", "agent": "claude-code", "event": "PostToolUse"}
    for _, text, _ in CORPUS[:20]:
        assert parse_in_place(params, _event(text), sanitizer, 100) is None
    secret_param = {**params, "session_id": "sk-abcdefghijklmnopqrstuvwx"}
    assert parse_in_place(secret_param, _event("x"), sanitizer, 100) is None
    assert parse_in_place(params, _event("x"), sanitizer, IN_PLACE_BYTES + 1) is None
    with pytest.raises(InvalidInput):
        parse_in_place({**params, "agent": "bad agent"}, _event("x"), sanitizer, 100)


def test_short_texts_seen_before_redact_the_same() -> None:
    redactor = Redactor()
    secret = "token=sk-abcdefghijklmnopqrstuvwx"
    for _ in range(3):
        assert redactor.redact("claude-code") == "claude-code"
        assert "abcdefghijklmnop" not in redactor.redact(secret)
        assert redactor.holds_secret(secret)
        assert redactor.redact("lone \ud800") == "lone \ufffd"


def test_an_event_naming_no_project_is_resolved_off_the_loop() -> None:
    params = {"agent": "claude-code", "event": "PostToolUse", "cwd": "/tmp"}
    assert parse_in_place(params, _event("x"), Sanitizer(), 100) is None
