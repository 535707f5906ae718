"""The link graph's SVG body (lines, cluster labels, nodes), built in Python.

A graph of a few hundred pages is a thousand-odd elements; through the template
engine their formatting was most of the graph page's rendering time (≈ 10 ms at
300 nodes), which a page rendered anew after every write pays each time. The
markup is the same as the template gave, every value escaped as it would have.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

from ai_memory.web.markdown import page_url


def graph_svg(graph: dict[str, Any], workspace: str, project: str) -> Markup:
    """The three ``<g>`` groups of a laid-out graph (see ``graph.layout``)."""
    lines = "".join(
        f'<line x1="{e["x1"]}" y1="{e["y1"]}" x2="{e["x2"]}" y2="{e["y2"]}"/>'
        for e in graph["lines"]
    )
    clusters = "".join(
        f'<text class="cluster" x="{c["x"]}" y="{c["y"]}" text-anchor="middle">'
        f"{escape(c['name'])} ({c['count']})</text>"
        for c in graph["clusters"]
    )
    pages = page_url(workspace, project, "")  # the one prefix of every node's address
    nodes = "".join(_node(n, pages) for n in graph["nodes"])
    return Markup(
        f'<g class="edges">{lines}</g>\n<g class="clusters">{clusters}</g>\n'
        f'<g class="nodes">{nodes}</g>'
    )


def _node(node: dict[str, Any], pages: str) -> str:
    title, path = escape(node["title"]), escape(node["path"])
    x, y, r = node["x"], node["y"], node["r"]
    label = ""
    if node["label"]:
        label = (
            f'<text x="{x}" y="{y - r - 3}" text-anchor="middle">'
            f"{escape(node['title'][:32])}</text>"
        )
    return (
        f'<a href="{escape(pages + quote(node["path"], safe="/"))}" '
        f'class="node kind-{escape(node["kind"])}">'
        f'<circle cx="{x}" cy="{y}" r="{r}"><title>{title} ({path}, {node["degree"]} links)'
        f"</title></circle>{label}</a>"
    )
