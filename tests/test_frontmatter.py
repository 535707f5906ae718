from __future__ import annotations

from ai_memory.core.identity import Scope
from ai_memory.wiki.frontmatter import parse_file, parse_markdown, render_markdown
from ai_memory.wiki.links import parse_links


def test_round_trip_keeps_unknown_keys_and_orders_known_ones() -> None:
    text = "---\ncustom: 1\ntitle: T\ntags: [a, b]\ncreated: 2024-01-02\n---\n\nBody\n"
    parsed = parse_markdown(text)
    assert parsed.error is None
    assert parsed.frontmatter == {
        "custom": 1,
        "title": "T",
        "tags": ["a", "b"],
        "created": "2024-01-02",
    }
    rendered = render_markdown(parsed.frontmatter, parsed.body)
    assert rendered.index("title:") < rendered.index("custom:")
    assert parse_markdown(rendered).frontmatter == parsed.frontmatter


def test_broken_yaml_keeps_the_whole_text_and_says_why() -> None:
    text = "---\ntitle: [unclosed\n---\nBody\n"
    parsed = parse_markdown(text)
    assert parsed.error is not None and "not valid YAML" in parsed.error
    assert parsed.body == text
    scalar = parse_markdown("---\njust a string\n---\nBody\n")
    assert scalar.error is not None and "not a mapping" in scalar.error


def test_text_without_frontmatter() -> None:
    parsed = parse_markdown("# Title\n\ntext")
    assert not parsed.has_frontmatter and parsed.frontmatter == {} and parsed.error is None


def test_links_of_every_form() -> None:
    source = Scope.of(None, "api").page("decisions/db.md")
    body = (
        "[[concepts/wal.md]] [[concepts/wal.md|again]] [label](../gotchas/locks.md) "
        "[[web:index.md]] [[team/web:notes/x.md]] [[_global:prefs.md]] [[plain]] "
        "[ext](https://example.com/a.md) `[[in/code.md]]`\n```\n[[fenced.md]]\n```\n"
        "[[../escape.md]]"
    )
    links = {(link.workspace, link.project, link.path) for link in parse_links(body, source)}
    assert links == {
        ("default", "api", "concepts/wal.md"),
        ("default", "api", "gotchas/locks.md"),
        ("default", "web", "index.md"),
        ("team", "web", "notes/x.md"),
        ("default", "_global", "prefs.md"),
        ("default", "api", "plain.md"),
    }


def test_hostile_blocks_are_errors_not_exceptions() -> None:
    for block, problem in [
        ("a: &a [*a]", "refers to itself"),
        ("a: &a {b: [1, *a]}", "refers to itself"),
        ("a: " + "[" * 5000 + "]" * 5000, "nested more than"),
        ("n: " + "1" * 5000, "cannot be read"),
        ("a: *missing", "not valid YAML"),
    ]:
        parsed = parse_markdown(f"---\n{block}\n---\nBody\n")
        assert parsed.error is not None and problem in parsed.error, (block, parsed.error)
        assert parsed.frontmatter == {} and parsed.body.endswith("Body\n")


def test_a_file_keeps_the_fields_within_their_caps() -> None:
    text = "---\ntitle: T\ntags: [" + ",".join(f"t{i}" for i in range(51)) + "]\n---\nBody\n"
    parsed = parse_file(text)
    assert parsed.frontmatter == {"title": "T"} and parsed.body == "Body\n"
    assert parsed.error is not None and "'tags' has 51 items; the limit is 50" in parsed.error
    assert parse_markdown(text).frontmatter["tags"][50] == "t50"
