"""The direct writer of plain frontmatter gives exactly PyYAML's text, or declines."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.wiki import yaml_dump
from ai_memory.wiki.frontmatter import parse_markdown, render_markdown
from ai_memory.wiki.yaml_plain import plain_dump

# Words the resolver reads as something other than a string, and the emitter's indicators.
TRICKY = [
    "true",
    "False",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "null",
    "Null",
    "~",
    "",
    "0",
    "-1",
    "+1",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "1e3",
    "-.5",
    ".inf",
    "-.Inf",
    ".nan",
    "1:20",
    "190:20:30",
    "2026-12-02",
    "2026-12-02T00:15:59.123456Z",
    "2026-1-2 3:04:05",
    "<<",
    "=",
    "---",
    "...",
    "- x",
    "-x",
    "? x",
    "?x",
    ": x",
    ":x",
    "x:",
    "x: y",
    "x:y",
    "x #y",
    "x#y",
    "#x",
    "'q'",
    '"q"',
    "it's",
    "[a]",
    "{a}",
    "a,b",
    "&a",
    "*a",
    "!t",
    "|",
    ">",
    "%x",
    "@x",
    "`x`",
    " lead",
    "trail ",
    "two  spaces",
    "a\\b",
    "Note 12",
]
ALPHABET = "ab Z09-_.:#?'\"[]{},&*!|>%@`~=<+/\\ \t\n\u00e9\u2028"


def pieces() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(TRICKY),
        st.text(alphabet=ALPHABET, max_size=12),
        st.lists(st.sampled_from(TRICKY), min_size=1, max_size=3).map(" ".join),
        st.lists(st.sampled_from([*TRICKY, "a", "b"]), min_size=1, max_size=3).map("".join),
    )


def values() -> st.SearchStrategy[Any]:
    scalar = st.one_of(pieces(), st.booleans(), st.none(), st.integers(), st.floats())
    return st.one_of(scalar, st.lists(st.one_of(pieces(), st.integers()), max_size=4))


KEYS = st.one_of(st.sampled_from([*TRICKY, "title", "kind", "tags", "x_1"]), pieces())


def pyyaml(data: dict[str, Any], dumper: Any) -> str:
    return yaml_dump.dump_with(data, dumper)


@settings(max_examples=3000, deadline=None)
@given(st.dictionaries(KEYS, values(), max_size=6))
def test_plain_text_is_pyyaml_text(data: dict[str, Any]) -> None:
    text = plain_dump(data)
    if text is None:
        return
    assert text == pyyaml(data, yaml.SafeDumper)
    assert text == pyyaml(data, yaml.CSafeDumper)
    assert yaml.safe_load(text) == data


def test_ordinary_frontmatter_is_written_directly_and_reads_back() -> None:
    data = {
        "title": "Note 12: what it's about",
        "kind": "note",
        "tags": ["alpha", "2026", "yes"],
        "entities": [],
        "pinned": True,
        "created": "2026-12-02T00:15:59.123456Z",
        "count": -3,
        "agent": None,
    }
    text = plain_dump(data)
    assert text is not None
    assert text == pyyaml(data, yaml.SafeDumper)
    assert "tags:\n- alpha\n- '2026'\n- 'yes'\n" in text
    parsed = parse_markdown(render_markdown(data, "# Body\n"))
    assert parsed.frontmatter == data
    assert parsed.body == "# Body\n"


def test_what_it_cannot_write_goes_to_the_emitter() -> None:
    assert plain_dump({}) is None
    assert plain_dump({"title": "caf\u00e9"}) is None
    assert plain_dump({"title": "a\nb"}) is None
    assert plain_dump({"ratio": 0.5}) is None
    assert plain_dump({"nested": {"a": 1}}) is None
    assert plain_dump({"on": "x"}) is None  # a key the resolver reads as a boolean
    assert yaml_dump.dump({"title": "caf\u00e9", "ratio": 0.5}) == "title: caf\u00e9\nratio: 0.5\n"
