"""JSON through the ``_json`` accelerator alone, for the hook client and the MCP bridge.

``json`` imports ``re`` (and with it ``enum``, ``functools`` and the regular
expression compiler), which costs more than the interpreter takes to start.
The C scanner and encoder ``json`` itself uses need none of it. Only a payload
that is not valid JSON makes the scanner import ``json.decoder`` for its error.
Without ``_json`` (another Python), the ``json`` module is used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"


_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Context:
    """What ``_json.make_scanner`` reads: the options of ``json.loads`` by default."""

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _CONSTANTS.__getitem__


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def loads(data: str | bytes) -> Any:
    """``json.loads``: a ``ValueError`` for anything that is not one JSON document."""
    if isinstance(data, bytes):  # a BOM is dropped, as json.loads does (without its codec)
        data = (data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8")
    text = data
    try:
        import _json

        scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    except (ImportError, AttributeError, TypeError):
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan(text, start)
    except StopIteration:
        raise ValueError(f"Expecting value at {start}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data at {end}")
    return value


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``."""
    try:
        import _json

        encode = _json.make_encoder(
            None, _refuse, _json.encode_basestring, None, ":", ",", False, False, True
        )
    except (ImportError, AttributeError, TypeError):
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "".join(encode(value, 0))
