"""Writing frontmatter YAML: libyaml's emitter where it writes what PyYAML's would.

A page write renders its frontmatter in the writer thread, and PyYAML's pure
Python emitter was a sixth of that thread's time per page. libyaml emits the same
text for the same values as long as every string is printable ASCII or a
character of the Basic Multilingual Plane outside the line and paragraph
separators and the byte-order mark; they part ways on control characters,
escapes of other characters and line breaks (libyaml escapes what PyYAML quotes
and folds), so frontmatter holding any of those is left to PyYAML. Files stay
byte for byte what they were.

The commonest frontmatter (keys that are plain words; values that are printable
ASCII strings, lists of them, booleans, integers or null) does not need an
emitter at all: :mod:`ai_memory.wiki.yaml_plain` writes it directly, the same text.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ai_memory.wiki.yaml_plain import plain_dump

_EMITS_ALIKE = re.compile(r"[\x20-\x7e\u00a1-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")
_FAST: Any = getattr(yaml, "CSafeDumper", None)


def dump(data: dict[str, Any]) -> str:
    """``data`` as block YAML, keys in their order, Unicode kept, lines never folded."""
    plain = plain_dump(data)
    if plain is not None:
        return plain
    dumper = _FAST if _FAST is not None and _alike(data) else yaml.SafeDumper
    return dump_with(data, dumper)


def dump_with(data: dict[str, Any], dumper: Any) -> str:
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    return text


def _alike(value: Any) -> bool:
    """Whether libyaml writes ``value`` exactly as PyYAML does (every string checked)."""
    if isinstance(value, str):
        return _EMITS_ALIKE.fullmatch(value) is not None
    if isinstance(value, dict):
        return all(_alike(k) and _alike(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_alike(v) for v in value)
    return value is None or isinstance(value, bool | int | float)
