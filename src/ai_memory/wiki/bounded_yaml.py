"""A YAML loader for frontmatter that refuses alias bombs, self-references and deep nesting.

Aliases let a few hundred bytes stand for millions of nodes (6 levels of 9
aliases are 9**6 leaves), and an anchor that refers to itself makes a value
that contains itself. Both are refused while the document is composed, before
any Python object is built, so a hostile block costs milliseconds to refuse.

Scanning and parsing run in libyaml (C) when PyYAML was built with it, several
times faster than the pure-Python parser a reindex would otherwise spend most
of its time in; the bounded composer above it is the same either way. A block
libyaml rejects is read again by the pure-Python parser, whose answer (a value
or a precise error) is the one given, so a broken block reads as it always did.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

try:
    from yaml import cyaml

    CParser: Any = cyaml.CParser  # type: ignore[attr-defined]
except (ImportError, AttributeError):  # PyYAML without libyaml: the pure-Python parser alone
    CParser = None

MAX_ALIASES = 100  # alias uses in one frontmatter block
MAX_NODES = 10_000  # nodes once every alias is expanded
MAX_ALIAS_CHARS = 64 * 1024  # characters of scalar text that aliases repeat
MAX_DEPTH = 20  # nested sequences and mappings


class FrontmatterRefused(yaml.YAMLError):
    """The block is well-formed YAML but too costly (or impossible) to turn into values."""


class _Bounds(Composer):
    """The composer, counting as it goes; dates stay strings so they round-trip as JSON."""

    def _start_counting(self) -> None:
        self._aliases = 0
        self._nodes = 0
        self._alias_chars = 0
        self._depth = 0
        self._open: set[str] = set()
        # Per anchor: (nodes, scalar characters) it stands for, counted once when composed.
        self._sizes: dict[str, tuple[int, int]] = {}
        self._chars = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[attr-defined]
        if isinstance(event, yaml.AliasEvent):
            return self._compose_alias(parent, index, str(event.anchor))
        anchor = event.anchor
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise FrontmatterRefused(_too_deep())
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


class BoundedLoader(_Bounds, yaml.SafeLoader):
    """Pure-Python scanning and parsing under the bounded composer."""

    def __init__(self, stream: str) -> None:
        yaml.SafeLoader.__init__(self, stream)
        self._start_counting()


BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)


def _c_loader() -> type[_Bounds] | None:
    if CParser is None:
        return None

    class FastBoundedLoader(_Bounds, CParser, SafeConstructor, Resolver):  # type: ignore[misc]
        """libyaml's events under the bounded composer (the composer comes first)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            Composer.__init__(self)
            self._start_counting()

    FastBoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)
    return FastBoundedLoader


_FAST = _c_loader()


def load(raw: str) -> Any:
    """Parse one frontmatter block; every failure is a :class:`yaml.YAMLError`.

    Values YAML itself cannot build (an integer of 5,000 digits, a structure too
    deep for the interpreter) are reported the same way instead of escaping.
    """
    if _FAST is not None:
        try:
            return _load(_FAST, raw)
        except FrontmatterRefused:
            raise
        except yaml.YAMLError:
            pass  # read again below, for the pure-Python parser's verdict
    return _load(BoundedLoader, raw)


def _load(loader_class: type[_Bounds], raw: str) -> Any:
    loader: Any = loader_class(raw)  # type: ignore[call-arg]
    try:
        return loader.get_single_data()
    except yaml.YAMLError:
        raise
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise FrontmatterRefused(f"frontmatter holds a value that cannot be read: {exc}") from exc
    finally:
        loader.dispose()


def _too_deep() -> str:
    return f"frontmatter is nested more than {MAX_DEPTH} levels deep"
