"""Snippets as text: markdown dropped, untrusted text escaped, query words marked."""

from __future__ import annotations

from ai_memory.web.text_view import highlight, snippet_html, stems_of


def test_words_that_start_like_a_query_word_are_marked_and_nothing_else() -> None:
    stems = stems_of("Writer commits")
    shown = highlight("The writers commit; a rewriter COMMITTED <b>writes</b> & amp", stems)
    assert str(shown) == (
        "The <mark>writers</mark> <mark>commit</mark>; a rewriter <mark>COMMITTED</mark> "
        "&lt;b&gt;<mark>writes</mark>&lt;/b&gt; &amp; amp"
    )


def test_escaped_text_never_gains_markup_from_a_query() -> None:
    stems = stems_of("amp lt script")
    shown = str(highlight("<script>alert(1)</script> & < amplify", stems))
    assert "<script" not in shown and "&lt;<mark>script</mark>&gt;" in shown
    assert "&amp; &lt; <mark>amplify</mark>" in shown  # entities are never split by a mark


def test_snippets_drop_markdown_and_keep_the_words() -> None:
    text = "```text\nrun [[decisions/db.md|the database]] and **pytest**\n```"
    assert str(snippet_html(text, stems_of("pytest"))).strip() == (
        "run the database and <mark>pytest</mark>"
    )
    assert str(highlight("no query", ())) == "no query"
