"""The rules every value from outside meets before it is used: ids, stored text.

One place, so the HTTP models and the MCP tools refuse the same values with the
same words. The checks are plain functions (usable anywhere); the ``Annotated``
types wrap them for pydantic, which names the field that failed.

* **Ids** (page ids, versions, handoff ids, cursors) are SQLite integers: a
  value past 2**63 - 1 cannot even be bound to a query.
* **Text** that is stored must encode as UTF-8 (no lone surrogates, which JSON
  can spell as ``"\\ud800"``) and holds no NUL (C tools and git truncate at it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BeforeValidator, Field

from ai_memory.core.textcheck import text_problem

MAX_SQL_ID = 2**63 - 1
MAX_JSON_DEPTH = 32

T = TypeVar("T")


def json_problem(value: object, where: str = "") -> tuple[str, str] | None:
    """The first string (key or value) in a JSON value that cannot be stored, as
    ``(location, problem)``; or None. Walks iteratively, so depth costs no stack."""
    stack: list[tuple[object, str, int]] = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return at, f"is nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return at, problem
        elif isinstance(item, Mapping):
            for key, child in item.items():
                name = str(key)
                problem = text_problem(name)
                if problem:
                    return at, f"has a key that {problem}"
                stack.append((child, _join(at, printable(name)[:80]), depth + 1))
        elif isinstance(item, Sequence) and not isinstance(item, bytes | bytearray):
            stack.extend((child, _join(at, str(i)), depth + 1) for i, child in enumerate(item))
    return None


def printable(text: str) -> str:
    """``text`` safe to put in an answer: lone surrogates spelled as ``\\udXXX`` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _join(at: str, part: str) -> str:
    return f"{at}.{part}" if at else part


def _check_text(value: object) -> object:
    """Before pydantic's own str checks, so the answer says what is wrong with the text."""
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise ValueError(problem)
    return value


def _check_json(value: T) -> T:
    found = json_problem(value)
    if found:
        at, problem = found
        raise ValueError(f"at {at}: {problem}" if at else problem)
    return value


# Stored text: refused with a message naming the field when it holds NUL or a lone surrogate.
# Bounded text puts the bound first, so pydantic reports it in characters:
# ``Annotated[str, Field(max_length=64), STORABLE]``.
STORABLE = BeforeValidator(_check_text)
Text = Annotated[str, STORABLE]
# A JSON object stored as is (a handoff's content): every key and string inside is Text.
JsonObject = Annotated[dict[str, Any], AfterValidator(_check_json)]
# A SQLite row id, version or cursor.
SqlId = Annotated[int, Field(ge=1, le=MAX_SQL_ID)]
