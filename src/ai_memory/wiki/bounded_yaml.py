"""A YAML loader for frontmatter that refuses alias bombs, self-references and deep nesting.

Aliases let a few hundred bytes stand for millions of nodes (6 levels of 9
aliases are 9**6 leaves), and an anchor that refers to itself makes a value
that contains itself. Both are refused while the document is composed, before
any Python object is built, so a hostile block costs milliseconds to refuse.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_ALIASES = 100  # alias uses in one frontmatter block
MAX_NODES = 10_000  # nodes once every alias is expanded
MAX_ALIAS_CHARS = 64 * 1024  # characters of scalar text that aliases repeat
MAX_DEPTH = 20  # nested sequences and mappings


class FrontmatterRefused(yaml.YAMLError):
    """The block is well-formed YAML but too costly (or impossible) to turn into values."""


class BoundedLoader(yaml.SafeLoader):
    """Safe loading with bounds; dates stay strings so they round-trip and serialise to JSON."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._nodes = 0
        self._alias_chars = 0
        self._depth = 0
        self._open: set[str] = set()
        # Per anchor: (nodes, scalar characters) it stands for, counted once when composed.
        self._sizes: dict[str, tuple[int, int]] = {}
        self._chars = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            return self._compose_alias(parent, index, str(event.anchor))
        anchor = event.anchor
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise FrontmatterRefused(f"frontmatter is nested more than {MAX_DEPTH} levels deep")
        nodes_before, chars_before = self._nodes, self._chars
        self._count(1, len(event.value) if isinstance(event, yaml.ScalarEvent) else 0)
        if anchor is not None:
            self._open.add(anchor)
        node = super().compose_node(parent, index)
        if anchor is not None:
            self._open.discard(anchor)
            self._sizes[anchor] = (self._nodes - nodes_before, self._chars - chars_before)
        self._depth -= 1
        return node

    def _compose_alias(self, parent: yaml.Node | None, index: int, anchor: str) -> yaml.Node | None:
        if anchor in self._open:
            raise FrontmatterRefused(f"frontmatter anchor &{anchor} refers to itself")
        self._aliases += 1
        if self._aliases > MAX_ALIASES:
            raise FrontmatterRefused(f"frontmatter uses more than {MAX_ALIASES} aliases")
        node = super().compose_node(parent, index)
        nodes, chars = self._sizes.get(anchor, (1, 0))
        self._alias_chars += chars
        if self._alias_chars > MAX_ALIAS_CHARS:
            raise FrontmatterRefused(
                f"frontmatter aliases repeat more than {MAX_ALIAS_CHARS} characters of text"
            )
        self._count(nodes, chars)
        return node

    def _count(self, nodes: int, chars: int) -> None:
        self._nodes += nodes
        self._chars += chars
        if self._nodes > MAX_NODES:
            raise FrontmatterRefused(
                f"frontmatter expands to more than {MAX_NODES} values (counting every alias)"
            )


def _as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)


def load(raw: str) -> Any:
    """Parse one frontmatter block; every failure is a :class:`yaml.YAMLError`.

    Values YAML itself cannot build (an integer of 5,000 digits, a structure too
    deep for the interpreter) are reported the same way instead of escaping.
    """
    try:
        return yaml.load(raw, Loader=BoundedLoader)
    except yaml.YAMLError:
        raise
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise FrontmatterRefused(f"frontmatter holds a value that cannot be read: {exc}") from exc
