"""Markdown links found as they always were: images and code left out, the rest kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.core.identity import Scope
from ai_memory.core.paths import validate_page_path
from ai_memory.wiki import links
from ai_memory.wiki.links import parse_links

SOURCE = Scope.of(None, "api").page("notes/here.md")


def paths(body: str) -> list[str]:
    return [link.path for link in parse_links(body, SOURCE)]


def test_an_image_is_not_a_link_but_a_link_in_its_title_is() -> None:
    assert paths("![pic](img.md) and [doc](doc.md)") == ["doc.md"]
    assert paths('![pic](img.md "[inner](inner.md)")') == ["inner.md"]
    assert paths("!![x](a.md) ! [y](b.md) [![z](c.md)](d.md)") == ["b.md"]
    assert paths("[first](one.md)![second](two.md)[third](three.md)") == ["one.md", "three.md"]


def test_links_in_fenced_and_inline_code_are_left_out() -> None:
    body = "```\n[a](a.md)\n```\n~~~\n[[b.md]]\n~~~\n`[c](c.md)` [d](d.md) [[e.md]]"
    assert paths(body) == ["e.md", "d.md"]
    assert paths("``` not a fence at line start [f](f.md)") == ["f.md"]
    assert paths("```\nunclosed [g](g.md)") == ["g.md"]


@settings(max_examples=2000, deadline=None)
@given(
    st.text(alphabet="aZ09_-./ \u00e9:~\u2024", max_size=16),
    st.sampled_from(["", ".md", "/x.md", "/.md"]),
)
def test_a_path_taken_without_the_full_check_passes_it(stem: str, end: str) -> None:
    path = stem + end
    if links._plain(path):
        assert validate_page_path(path) == path


def test_link_paths_taken_without_the_full_check_are_the_plain_ones() -> None:
    assert links._plain("notes/n1.md")
    assert links._plain("a-b/c_d.e.md")
    for path in ("notes/.hidden.md", "notes//n.md", "../n.md", "n.txt", ".md", "a b.md"):
        assert not links._plain(path)
    assert not links._plain("a" * 300 + ".md")  # over the segment limit: the full check says so
