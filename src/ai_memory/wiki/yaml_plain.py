"""Block YAML for plain frontmatter, written directly: the text PyYAML's dump gives.

A page write renders its frontmatter on the writer thread, and even libyaml's
emitter (with PyYAML's representer and resolver around it) was a sixth of that
thread's time a page. For the frontmatter nearly every page has — keys that are
plain words, values that are printable ASCII strings, lists of such strings,
booleans, integers or null — the emitter's choices are few and written out here:
a string stays plain unless it would read back as something else (a number, a
date, ``true``…, which the resolver's own patterns say) or holds an indicator
the emitter refuses in a plain scalar; then it is single-quoted. Anything else
returns None and goes to the emitter. ``tests/test_wiki_yaml_plain.py`` checks
the text against PyYAML's on many generated inputs.
"""

from __future__ import annotations

import re
from typing import Any

from yaml.resolver import Resolver

_STR = "tag:yaml.org,2002:str"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,100}")
_PRINTABLE = re.compile(r"[\x20-\x7e]{1,10000}")
# In a plain block scalar: ": " or a final ":", " #", or an indicator first.
_REFUSED = re.compile(r"^[-?:](?: |$)|^[#,\[\]{}&*!|>'\"%@`]|^---|^\.\.\.|: |:$| #| $|^ ")


def plain_dump(data: dict[str, Any]) -> str | None:
    """``data`` as block YAML if every key and value is plain; else None."""
    if not data:
        return None
    lines: list[str] = []
    for key, value in data.items():
        if not (isinstance(key, str) and _KEY.fullmatch(key) and _reads_as_str(key)):
            return None
        if isinstance(value, list):
            if not value:
                lines.append(f"{key}: []\n")
                continue
            lines.append(f"{key}:\n")
            for item in value:
                text = _scalar(item) if isinstance(item, str) else None
                if text is None:
                    return None
                lines.append(f"- {text}\n")
            continue
        text = _scalar(value)
        if text is None:
            return None
        lines.append(f"{key}: {text}\n")
    return "".join(lines)


def _scalar(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is not str or not _PRINTABLE.fullmatch(value):
        return None
    if _reads_as_str(value) and not _REFUSED.search(value):
        return value
    quoted = value.replace("'", "''")
    return f"'{quoted}'"


def _reads_as_str(value: str) -> bool:
    """Whether the resolver reads ``value``, written plain, back as a string."""
    implicit = Resolver.yaml_implicit_resolvers
    for first in (value[0], None):
        for _tag, pattern in implicit.get(first, ()):
            if pattern.match(value):
                return False
    return True
