"""The config.toml that ``init`` writes: every default, commented out, with what it does."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from ai_memory.config import Config


def render_default_config() -> str:
    """Each section of :class:`Config` in its order; lists of tables are described only."""
    out = [
        "# ai-memory settings. Every line below is a default, commented out.",
        "# Uncomment to change; any scalar can also be set by an AI_MEMORY_* environment",
        "# variable, '__' between section and key (AI_MEMORY_DECAY__LAMBDA=0.05).",
    ]
    for name, section in Config.model_fields.items():
        model = section.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        out += ["", f"[{name}]"]
        for field_name, field in model.model_fields.items():
            key = field.alias or field_name
            if field.description:
                out.append(f"# {field.description}")
            if field.default is None:  # an optional table of its own, absent by default
                out.append(f"# [{name}.{key}]: the keys of [{name}] (see docs/llm.md)")
                continue
            out.append(f"# {key} = {_toml_scalar(field.default)}")
    return "\n".join(out) + "\n"


def _toml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_scalar(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))
