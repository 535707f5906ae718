"""The hook client's JSON and pattern cache give what ``json`` and ``re`` give."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_memory.hookclient import fastjson
from ai_memory.hookclient.fastre import Patterns
from ai_memory.hookclient.patterns import SECRETS
from ai_memory.hookclient.redact import redact

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(JSON)
def test_json_round_trips_as_the_json_module_writes_and_reads(value: object) -> None:
    text = fastjson.dumps(value)
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert fastjson.loads(text) == json.loads(text)
    assert fastjson.loads(f" \n{text}\t".encode()) == json.loads(text)


@pytest.mark.parametrize("bad", ["", "  ", '{"a": 1} x', "{", "[1,]", b"\xff", b"\xef\xbb\xbf["])
def test_what_is_not_one_json_document_is_a_value_error(bad: str | bytes) -> None:
    with pytest.raises(ValueError):
        fastjson.loads(bad)


def test_the_pattern_cache_builds_what_re_compiles(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache" / "patterns.marshal")
    first = Patterns(cache)
    wanted = [s.re_pattern or s.pattern for s in SECRETS]
    assert all(first.get(p) == re.compile(p) for p in wanted)
    first.save()
    again = Patterns(cache)
    assert set(again.entries) == set(wanted)
    assert all(again.get(p) == re.compile(p) for p in wanted) and not again.added
    text = "token: ghp_" + "a1B2" * 10 + " and Authorization: Bearer abcdef123456"
    assert redact(text, again) == redact(text) != text


def test_a_damaged_or_unwritable_cache_falls_back_to_re(tmp_path: Path) -> None:
    broken = tmp_path / "patterns.marshal"
    broken.write_bytes(b"\x00not marshal")
    assert Patterns(str(broken)).get(r"a+b") == re.compile(r"a+b")
    (tmp_path / "file").write_text("x")
    blocked = Patterns(str(tmp_path / "file" / "patterns.marshal"))
    assert blocked.get(r"c+d") == re.compile(r"c+d")
    blocked.save()  # cannot be written there: nothing raised, nothing kept
    assert Patterns(None).get(r"e+f") == re.compile(r"e+f")


def test_warming_fills_the_cache_with_the_whole_table(tmp_path: Path) -> None:
    from ai_memory.hookclient.fastre import warm

    cache = str(tmp_path / "patterns.marshal")
    wanted = [s.re_pattern or s.pattern for s in SECRETS]
    warm(wanted, cache)
    assert set(Patterns(cache).entries) == set(wanted)
