"""JSON schemas of answer models, shaped for each provider's structured-output mode.

Pydantic emits ``$defs`` and ``$ref``; not every provider resolves them, so the
references are inlined. Gemini's ``responseSchema`` takes an OpenAPI subset, so
its copy keeps only the keys that subset knows.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "items",
        "anyOf",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "propertyOrdering",
        "const",
    }
)


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with every ``$ref`` replaced by its definition."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    inlined: dict[str, Any] = _inline(schema, defs)
    return inlined


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            merged = {
                **defs[ref.removeprefix("#/$defs/")],
                **{k: v for k, v in node.items() if k != "$ref"},
            }
            return _inline(merged, defs)
        return {key: _inline(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An inlined JSON schema as Gemini's OpenAPI subset (``nullable`` for ``null`` unions)."""
    variants = schema.get("anyOf")
    if isinstance(variants, list):
        others = [v for v in variants if v.get("type") != "null"]
        if len(others) == 1:
            single = gemini_schema({**others[0], **_without(schema, "anyOf")})
            return {**single, "nullable": True} if len(others) < len(variants) else single
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in GEMINI_KEYS:
            continue
        if key == "properties":
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
            out["propertyOrdering"] = list(value)
        elif key == "items":
            out[key] = gemini_schema(value)
        elif key == "anyOf":
            out[key] = [gemini_schema(sub) for sub in value]
        elif key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, str):
            out[key] = value.upper()
        else:
            out[key] = value
    return out


def _without(schema: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != key}
