"""A search hit's explain trace as HTML, built in Python.

A search page shows up to 20 hits, each with a table of its streams; built by a
template macro, the formatting of a few hundred numbers was most of the page's
rendering time. Every value is escaped here, as the template would have.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

HEAD = (
    '<details class="explain"><summary>why this result</summary>\n'
    '<table class="explain-table">\n'
    '<thead><tr><th>stream</th><th class="num">rank</th><th class="num">score</th>'
    '<th class="num">contribution</th><th>via</th></tr></thead>\n<tbody>'
)


def explain_html(explain: dict[str, Any] | None) -> Markup:
    """The ``<details>`` block of one hit's explain trace; empty without one."""
    if not explain:
        return Markup("")
    rows = "".join(_row(name, stream) for name, stream in explain["streams"].items())
    parts = "".join(
        f" · {escape(k)} {v:.2f}" for k, v in explain.get("authority_parts", {}).items()
    )
    tail = ""
    if explain.get("matched_entities"):
        tail += " · entities: " + escape(", ".join(explain["matched_entities"]))
    if explain.get("turns"):
        tail += " · turns that voted: " + escape(", ".join(str(t) for t in explain["turns"]))
    summary = (
        f'<p class="muted">fused {explain["rrf"]:.4f} \u00d7 authority '
        f"{explain['authority']:.2f}{parts}{tail}</p>"
    )
    return Markup(f"{HEAD}{rows}</tbody>\n</table>\n{summary}\n</details>")


def _row(name: str, stream: dict[str, Any]) -> str:
    via = escape(stream.get("via") or "")
    share = stream.get("share")
    if share is not None:
        via += f" ({share:.2f})"
    return (
        f'<tr><td>{escape(name)}</td><td class="num">{escape(stream["rank"])}</td>'
        f'<td class="num">{stream["score"]:.3f}</td>'
        f'<td class="num">{stream["contribution"]:.4f}</td><td>{via}</td></tr>'
    )
