"""The sanitizer: secrets redacted, escapes stripped, sizes capped after redaction."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ai_memory.core.errors import ConfigError
from ai_memory.hookclient.patterns import cut_at_token
from ai_memory.hookclient.redact import redact as client_redact
from ai_memory.hookclient.redact import redact_payload
from ai_memory.hookclient.sessionid import safe_session_id
from ai_memory.hooks.aliases import normalise
from ai_memory.hooks.ingest import parse_event
from ai_memory.hooks.redactor import MAX_MATCHES, REDACTED_WHOLE
from ai_memory.hooks.sanitize import (
    EXCERPT_CAP,
    PROMPT_CAP,
    REDACTED,
    SanitizedObservation,
    Sanitizer,
)

# (pattern class, text with the secret, the secret itself)
SECRETS: list[tuple[str, str, str]] = [
    ("bearer", "curl -H 'Authorization: Bearer abcDEF123456789xyz'", "abcDEF123456789xyz"),
    ("bearer", "token is bearer eyzzQ29vbGVfdG9rZW4K", "eyzzQ29vbGVfdG9rZW4K"),
    (
        "openai",
        "OPENAI key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx123",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx123",
    ),
    (
        "anthropic",
        "use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    ),
    ("stripe", "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe", "restricted rk_live_51H8abcdefGHIJKL", "rk_live_51H8abcdefGHIJKL"),
    ("stripe", "test key sk_test_51H8abcdefGHIJKLmnop", "sk_test_51H8abcdefGHIJKLmnop"),
    (
        "github",
        "git push https://ghp_1234567890abcdefghijABCDEFGHIJ123456@github.com",
        "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    ),
    (
        "github",
        "oauth gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    ("github", "server ghs_abcdefghijklmnopqrstuvwxyz0123", "ghs_abcdefghijklmnopqrstuvwxyz0123"),
    (
        "github",
        "user-to-server ghu_abcdefghijklmnopqrstuvwxyz0123",
        "ghu_abcdefghijklmnopqrstuvwxyz0123",
    ),
    ("github", "refresh ghr_abcdefghijklmnopqrstuvwxyz0123", "ghr_abcdefghijklmnopqrstuvwxyz0123"),
    (
        "github",
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    ),
    ("aws", "aws id AKIAIOSFODNN7EXAMPLE in config", "AKIAIOSFODNN7EXAMPLE"),
    ("aws", "temporary ASIAY34FZKBOKMUTVV7A here", "ASIAY34FZKBOKMUTVV7A"),
    (
        "aws",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "google",
        "maps AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe ok",
        "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
    ),
    ("slack", "bot xoxb-2345678901-abcdefghijklmnop", "xoxb-2345678901-abcdefghijklmnop"),
    ("slack", "user xoxp-1111-2222-3333-abcdef", "xoxp-1111-2222-3333-abcdef"),
    (
        "jwt",
        "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    (
        "pem",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabcdef\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7",
    ),
    (
        "pem",
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n(cut)",
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
    (
        "pem",
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6\n-----END PRIVATE KEY-----",
        "MC4CAQAwBQYDK2VwBCIEIJ",
    ),
    ("url", "postgres://admin:hunter2secret@db.internal:5432/app", "hunter2secret"),
    ("url", "git clone https://user:p4ssw0rd!@example.com/repo.git", "p4ssw0rd!"),
    ("header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("header", '{"headers": {"authorization": "Token abcdef0123456789"}}', "abcdef0123456789"),
    ("header", "X-Api-Key: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("assign", "password=correcthorsebattery", "correcthorsebattery"),
    ("assign", '{"api_key": "zzkey-1234567890abc"}', "zzkey-1234567890abc"),
    ("assign", "client_secret: abcd1234efgh5678", "abcd1234efgh5678"),
    ("assign", "db passwd = s3cr3tvalue", "s3cr3tvalue"),
    ("env", "export OPENAI_API_KEY=qwertyuiopasdfgh", "qwertyuiopasdfgh"),
    ("env", "GITHUB_TOKEN=plainvalue123 make release", "plainvalue123"),
    ("env", "MY_SERVICE_SECRET='quoted-secret-value'", "quoted-secret-value"),
    ("env", "DB_PASSWORD=pa55word make migrate", "pa55word"),
]


@pytest.fixture(scope="module")
def sanitizer() -> Sanitizer:
    return Sanitizer()


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[s[0] for s in SECRETS])
def test_every_secret_sample_is_redacted(
    sanitizer: Sanitizer, kind: str, text: str, secret: str
) -> None:
    cleaned = sanitizer.clean(text, PROMPT_CAP)
    assert secret not in cleaned
    assert REDACTED in cleaned


def test_the_corpus_covers_every_pattern_class() -> None:
    assert len(SECRETS) >= 30
    assert len({kind for kind, _, _ in SECRETS}) >= 12


def test_ordinary_text_is_left_alone(sanitizer: Sanitizer) -> None:
    text = "Refactor the token parser in src/auth/token.py; 42 tests pass."
    assert sanitizer.clean(text, PROMPT_CAP) == text


def test_a_secret_across_the_cap_is_not_leaked(sanitizer: Sanitizer) -> None:
    secret = "ghp_" + "A1b2C3d4E5" * 4
    for shift in range(0, 90, 3):
        # The secret sits across the cap, so cutting before redacting would split it.
        text = "x" * (EXCERPT_CAP - 80 + shift) + " " + secret + " tail" * 200
        cleaned = sanitizer.clean(text, EXCERPT_CAP)
        assert len(cleaned.encode()) <= EXCERPT_CAP
        assert "cut" in cleaned
        assert not any(secret[:size] in cleaned for size in range(6, len(secret) + 1))


def test_a_secret_across_the_precut_is_dropped_whole(sanitizer: Sanitizer) -> None:
    secret = "AKIA" + "Z" * 16
    text = "a " * (PROMPT_CAP * 2 - 3) + secret + " more words " * 100
    cleaned = sanitizer.clean(text, PROMPT_CAP)
    assert "AKIAZZ" not in cleaned
    assert "[... cut" in cleaned


def test_caps_cut_at_utf8_boundaries_with_a_marker(sanitizer: Sanitizer) -> None:
    cleaned = sanitizer.clean("é" * 20_000, PROMPT_CAP)
    assert len(cleaned.encode("utf-8")) <= PROMPT_CAP
    assert cleaned.endswith("bytes]")
    assert "cut" in cleaned.splitlines()[-1]
    cleaned.encode("utf-8")  # no half characters


def test_ansi_escapes_and_control_characters_are_stripped(sanitizer: Sanitizer) -> None:
    text = "\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x00\x07\x1b bell\r\nnext\tcol\ud800"
    assert sanitizer.clean(text, PROMPT_CAP) == "red ok bell\nnext\tcol"


def test_configured_patterns_are_redacted_and_bad_ones_refused() -> None:
    custom = Sanitizer([r"ACME-\d{6}"])
    assert custom.clean("ticket ACME-123456 fixed", 100) == f"ticket {REDACTED} fixed"
    with pytest.raises(ConfigError):
        Sanitizer(["(unclosed"])


def test_only_the_sanitizer_builds_an_observation(sanitizer: Sanitizer) -> None:
    with pytest.raises(TypeError):
        SanitizedObservation("generic", "other", "s", None, "body", "{}")
    event = normalise(
        "claude-code",
        "PostToolUse",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": "src/app.py", "new_string": "API_TOKEN=abc123def"},
            "tool_response": "x" * 10_000,
        },
    )
    obs = sanitizer.observation(event, "s1")
    assert obs.kind == "post-tool-use" and obs.tool_name == "Edit"
    assert obs.files == ("src/app.py",)
    assert "abc123def" not in obs.body
    assert len(obs.body.encode()) <= 2 * EXCERPT_CAP + 100


def test_apply_patch_files_are_found(sanitizer: Sanitizer) -> None:
    patch = "*** Begin Patch\n*** Update File: src/cart.py\n@@\n*** Add File: tests/t.py\n"
    event = normalise(
        "codex", "PostToolUse", {"tool_name": "apply_patch", "tool_input": {"command": patch}}
    )
    assert sanitizer.observation(event, "s").files == ("src/cart.py", "tests/t.py")


def test_a_tool_name_holding_a_secret_is_redacted(sanitizer: Sanitizer) -> None:
    for name in ("ghp_" + "A1b2C3d4E5" * 4, "AKIAABCDEFGHIJKLMNOP", "x API_TOKEN=abc12345"):
        event = normalise("claude-code", "PostToolUse", {"tool_name": name, "tool_input": {}})
        obs = sanitizer.observation(event, "s")
        assert obs.tool_name == REDACTED
        assert name not in obs.body and "A1b2C3d4E5" not in obs.body
    plain = normalise("claude-code", "PostToolUse", {"tool_name": "mcp__db__token_count"})
    assert sanitizer.observation(plain, "s").tool_name == "mcp__db__token_count"


def test_long_text_without_whitespace_is_cut_with_a_marker_not_dropped(
    sanitizer: Sanitizer,
) -> None:
    minified = '{"a":"' + "b" * 8 + '",' + '"k":1,' * 20_000 + "}"
    cleaned = sanitizer.clean(minified, EXCERPT_CAP)
    assert cleaned.startswith('{"a":"bbbbbbbb",') and len(cleaned.encode()) <= EXCERPT_CAP
    kept = cleaned.rsplit("\n", 1)[0]
    assert cleaned.endswith(f"[... cut {len(minified) - len(kept)} bytes]")
    base64ish = "QUJD" * 20_000
    run = sanitizer.clean(base64ish, EXCERPT_CAP)
    assert run.endswith(f"[... cut {len(base64ish)} bytes]")  # said, never silent
    secret = "ghp_" + "Z" * 36
    split = sanitizer.clean("a," * (EXCERPT_CAP * 2 - 3) + secret + ",b" * 10, EXCERPT_CAP)
    assert "ghp_" not in split and "[... cut" in split


def test_a_sealed_observation_cannot_be_copied_with_new_text(sanitizer: Sanitizer) -> None:
    obs = sanitizer.observation(normalise("codex", "Stop", {"last_assistant_message": "hi"}), "s")
    with pytest.raises((TypeError, ValueError)):
        dataclasses.replace(obs, body="API_TOKEN=unsanitised")
    with pytest.raises((TypeError, ValueError)):
        dataclasses.replace(obs, body="x", seal=object())


# -- linear time, shared patterns, every field ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["token" * 13107, "password" * 8192, "a." * 32000 + "://", "api_key_" * 8000 + '"'],
    ids=["token", "password", "scheme", "assignment"],
)
def test_hostile_text_is_cleaned_by_both_engines(sanitizer: Sanitizer, text: str) -> None:
    """Each of these once took seconds to minutes; the result is what matters here."""
    cleaned = sanitizer.clean(text, PROMPT_CAP)
    assert len(cleaned.encode()) <= PROMPT_CAP
    assert client_redact(text) == text  # no secret in it: left alone


def test_a_tool_name_is_cut_before_it_is_scanned(sanitizer: Sanitizer) -> None:
    long = normalise("claude-code", "PostToolUse", {"tool_name": "token" * 16000})
    assert sanitizer.observation(long, "s").tool_name is None
    spaced = normalise("claude-code", "PostToolUse", {"tool_name": "mcp tool " * 9000})
    name = sanitizer.observation(spaced, "s").tool_name
    assert name is not None and len(name) <= 100


def test_configured_patterns_must_compile_under_re2() -> None:
    for bad in (r"(?<=key:)\w+", r"(a)\1", r"(?=x)y"):
        with pytest.raises(ConfigError, match="RE2"):
            Sanitizer([bad])
    kept = Sanitizer([r"(?P<k>ticket=)(?P<v>T-\d+)"])
    assert kept.clean("see ticket=T-991 now", 100) == f"see ticket={REDACTED} now"


def test_a_session_id_holding_a_secret_becomes_a_derived_id(sanitizer: Sanitizer) -> None:
    secret = "ghp_" + "k3Y9" * 9
    derived = sanitizer.session_id(secret)
    assert derived is not None and derived.startswith("s-") and "k3Y9" not in derived
    assert sanitizer.session_id(secret) == derived == safe_session_id(secret)
    assert sanitizer.session_id("  plain session/42 ") == "plain-session-42"
    event = normalise("claude-code", "UserPromptSubmit", {"prompt": "hi"})
    params = {"agent": "claude-code", "project": "p", "session_id": secret}
    parsed = parse_event(params, {"session_id": secret}, sanitizer)
    assert parsed.observation.session_id == derived
    assert sanitizer.observation(event, derived).session_id == derived


def test_long_session_ids_are_derived_from_all_of_them_as_the_hook_client_does(
    sanitizer: Sanitizer,
) -> None:
    first, second = "a" * 600 + "-one", "a" * 600 + "-two"  # alike in their first 600
    assert sanitizer.session_id(first) == safe_session_id(first)  # the client's id
    assert sanitizer.session_id(first) != sanitizer.session_id(second)
    params = {"agent": "claude-code", "project": "p", "event": "UserPromptSubmit"}
    flagged = parse_event(params, {"session_id": True, "prompt": "hi"}, sanitizer)
    numbered = parse_event(params, {"session_id": 42, "prompt": "hi"}, sanitizer)
    assert flagged.observation.session_id.startswith("claude-code-")  # a flag is no id
    assert numbered.observation.session_id == "42"


def test_past_its_match_budget_a_field_is_redacted_whole(sanitizer: Sanitizer) -> None:
    # Each replacement is a Python call: a field of thousands of secrets stops costing
    # more past MAX_MATCHES of one kind, and is redacted whole: a cut inside it could
    # split a secret another pattern needs entire (a URL's password ends at its "@").
    keys = " ".join(f"AKIA{i:016d}" for i in range(MAX_MATCHES - 1))
    url = "postgres://app:Tr0ub4dor-and-AKIAIOSFODNN7EXAMPLE@db.internal/app"
    text = f"kept {keys} {url} AKIA{'9' * 16} tail"
    assert sanitizer.clean(text, 1 << 20) == REDACTED_WHOLE
    assert sanitizer.clean(REDACTED_WHOLE, 1000) == REDACTED_WHOLE  # the mark is no secret
    within = sanitizer.clean(f"kept {keys} {url} tail", 1 << 20)  # exactly MAX_MATCHES
    assert within.startswith("kept [REDACTED]") and within.endswith(" tail")
    assert "Tr0ub4dor" not in within and REDACTED_WHOLE not in within


def test_secrets_in_json_and_escaped_json_are_redacted(sanitizer: Sanitizer) -> None:
    pem = (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    )
    texts = {
        "MIIEvQIBADANBgkq": json.dumps({"private_key": pem}),
        "hunter2hunter2": json.dumps(json.dumps({"password": "hunter2hunter2"})),
        "s3cr3t-v4lue": '{\\"api_key\\": \\"s3cr3t-v4lue\\"}',
    }
    for needle, text in texts.items():
        for cleaned in (sanitizer.clean(text, PROMPT_CAP), client_redact(text)):
            assert needle not in cleaned and REDACTED in cleaned


def test_the_hook_client_redacts_every_string_key_and_credential_field() -> None:
    payload = {
        "prompt": "use sk-proj-" + "A1" * 12,
        "tool_input": {"password": "short", "env": {"GITHUB_TOKEN": "abc"}, "n": 3},
        "ghp_" + "Z9" * 18: True,
        "list": ["xoxb-1234567890-abcdefghijkl"],
    }
    cleaned = redact_payload(payload)
    text = json.dumps(cleaned)
    assert "A1A1A1" not in text and "short" not in text and "Z9Z9" not in text
    assert "abcdefghijkl" not in text and '"abc"' not in text
    assert cleaned["tool_input"]["n"] == 3


def test_cutting_at_a_token_is_plain_string_work() -> None:
    assert cut_at_token("abc def", 10) == "abc def"
    assert cut_at_token("abc defghij", 6) == "abc "
    assert cut_at_token("x" * 100, 10) == ""
