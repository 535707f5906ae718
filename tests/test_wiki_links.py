"""Markdown links found as they always were: images and code left out, the rest kept."""

from __future__ import annotations

from ai_memory.core.identity import Scope
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
