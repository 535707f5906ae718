"""The hook parse's shortcuts give what the plain code they stand for gives.

One walk over a payload's keys finds each field as :func:`pick` does; the meta
writer is ``json.dumps``; a session id of safe characters is kept as folding
would keep it; a batch's memo of session ids answers as each item alone.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.hookclient.resolve import fold_unsafe
from ai_memory.hookclient.sessionid import safe_session_id
from ai_memory.hooks.aliases import FIELDS, pick, picked
from ai_memory.hooks.ingest import ParamsMemo, parse_event
from ai_memory.hooks.sanitize import Sanitizer, meta_json

SANITIZER = Sanitizer()
CHECKS = settings(max_examples=400, deadline=None, derandomize=True, database=None)
ALIASES = sorted({alias for names in FIELDS.values() for alias in names} | {"junk"})
VALUES = st.one_of(
    st.none(),
    st.just(""),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=6),
    st.lists(st.integers(0, 3), max_size=2),
)
TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from('\ud800"\\\n\x00é😀'))
META_VALUES = st.one_of(
    TEXT,
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.lists(TEXT, max_size=3),
    st.floats(allow_nan=True),
    st.lists(st.integers(), max_size=2),
    st.none(),
)


@CHECKS
@given(payload=st.dictionaries(st.sampled_from(ALIASES), VALUES, max_size=10))
def test_one_walk_finds_what_pick_finds_for_every_field(payload: dict[str, object]) -> None:
    found = picked(payload)
    for name in FIELDS:
        assert found.get(name) is pick(payload, name)
    assert set(found) <= set(FIELDS)


@CHECKS
@given(meta=st.dictionaries(st.sampled_from(["event", "cwd", "é", 'a"b']), META_VALUES))
def test_the_meta_writer_is_json_dumps(meta: dict[str, Any]) -> None:
    assert meta_json(meta) == json.dumps(meta, ensure_ascii=False)


def test_the_meta_writer_hands_other_keys_to_json_dumps() -> None:
    meta: dict[Any, object] = {"event": "x", 3: "y", None: True}
    assert meta_json(meta) == json.dumps(meta, ensure_ascii=False)


@CHECKS
@given(raw=st.text(alphabet="ab.-_ /:\u00e9Z9\t", max_size=120))
def test_a_session_id_is_folded_as_before(raw: str) -> None:
    folded = fold_unsafe(raw.strip()).strip("-.")[:100] or None
    assert safe_session_id(raw, lambda _: False) == folded


def test_a_batch_checks_each_session_id_as_its_item_alone() -> None:
    secret = "ghp_" + "Z" * 36
    ids = ["s1", " s1 ", "a b", secret, "s1", "x" * 100, secret, "bad/id", "", "s1"]
    memo: ParamsMemo = {}
    for session_id in ids:
        params = {"project": "one", "agent": "codex", "session_id": session_id}
        body: dict[str, object] = {"prompt": "hello", "session_id": "from-body"}
        alone = _outcome(params, body, None)
        assert _outcome(params, body, memo) == alone
    assert len(memo) == 1


def _outcome(params: dict[str, str], body: dict[str, object], memo: ParamsMemo | None) -> str:
    try:
        return repr(parse_event(params, body, SANITIZER, today="2026-01-01", memo=memo))
    except Exception as exc:  # the refusal itself is what must match
        return f"{type(exc).__name__}: {exc}"
