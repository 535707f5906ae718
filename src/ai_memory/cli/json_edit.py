"""Removing entries from a JSON file's text, every other byte left as the user wrote it.

``remove_to(text, after)`` takes a JSON document and the value it should hold
once some object members and array elements are gone (``after``: the parsed
document with our entries taken out), and deletes exactly those members and
elements from the text, each with its comma, keeping the indentation, key order,
spacing and escapes of everything else. If the result does not parse to
``after`` (a shape this cannot express as deletions), None: the caller falls
back to writing the value out whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(slots=True)
class Node:
    """A value and its span in the text; ``children`` are (key or None, span start, node),
    the span of an object member starting at its key."""

    value: Any
    start: int
    end: int
    children: list[tuple[str | None, int, Node]] = field(default_factory=list)


def remove_to(text: str, after: Any, ours: Callable[[Any], bool]) -> str | None:
    """``text`` without the members and elements ``after`` lacks; ``ours(value)`` says
    which array elements may go (the others are matched as edited in place)."""
    try:
        root = _parse(text, _SPACE.match(text, 0).end())  # type: ignore[union-attr]
    except (ValueError, IndexError):
        return None
    cuts: list[tuple[int, int]] = []
    _diff(root, after, ours, cuts)
    edited = text
    for start, end in sorted(cuts, reverse=True):
        edited = edited[:start] + edited[end:]
    try:
        return edited if json.loads(edited) == after else None
    except ValueError:
        return None


def _parse(text: str, at: int) -> Node:
    char = text[at]
    if char == "{":
        return _container(text, at, "}", keyed=True)
    if char == "[":
        return _container(text, at, "]", keyed=False)
    value, end = _DECODER.raw_decode(text, at)
    return Node(value, at, end)


def _container(text: str, at: int, close: str, *, keyed: bool) -> Node:
    node = Node({} if keyed else [], at, at)
    pos = _skip(text, at + 1)
    if text[pos] == close:
        node.end = pos + 1
        return node
    while True:
        start, key = pos, None
        if keyed:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos] != ":":
                raise ValueError("expected ':'")
            pos = _skip(text, pos + 1)
        child = _parse(text, pos)
        node.children.append((key, start, child))
        if keyed:
            node.value[key] = child.value
        else:
            node.value.append(child.value)
        pos = _skip(text, child.end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
            continue
        if text[pos] != close:
            raise ValueError(f"expected ',' or {close!r}")
        node.end = pos + 1
        return node


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]


def _diff(node: Node, after: Any, ours: Callable[[Any], bool], cuts: list[tuple[int, int]]) -> None:
    if node.value == after:
        return
    if isinstance(node.value, dict) and isinstance(after, dict):
        _cut(node, [i for i, (key, _, _) in enumerate(node.children) if key not in after], cuts)
        for key, _, child in node.children:
            if key in after:
                _diff(child, after[key], ours, cuts)
    elif isinstance(node.value, list) and isinstance(after, list):
        gone, j = [], 0
        for i, (_, _, child) in enumerate(node.children):
            left_before, left_after = len(node.children) - i, len(after) - j
            if j < len(after) and child.value == after[j]:
                j += 1
            elif left_before > left_after and ours(child.value):
                gone.append(i)
            elif j < len(after):
                _diff(child, after[j], ours, cuts)
                j += 1
        _cut(node, gone, cuts)


def _cut(node: Node, gone: list[int], cuts: list[tuple[int, int]]) -> None:
    """Delete children ``gone`` of ``node`` with the comma that joined each to a neighbour."""
    if not gone:
        return
    kept = [i for i in range(len(node.children)) if i not in gone]
    if not kept:
        cuts.append((node.start + 1, node.end - 1))  # leaves {} or []
        return
    spans = [(start, child.end) for _, start, child in node.children]
    for i in gone:
        earlier = [k for k in kept if k < i]
        if earlier:  # from the end of the kept sibling before it to its own end
            cuts.append((spans[max(earlier)][1], spans[i][1]))
        else:  # the first ones: from its start to the start of the next kept sibling
            later = min(k for k in kept if k > i)
            cuts.append((spans[i][0], spans[later][0]))
    _merge(cuts)


def _merge(cuts: list[tuple[int, int]]) -> None:
    """Overlapping cuts (neighbours deleted together) become one."""
    cuts.sort()
    merged: list[tuple[int, int]] = []
    for start, end in cuts:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    cuts[:] = merged
