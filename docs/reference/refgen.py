"""Renders the reference pages from the code itself, so they cannot drift from it.

Each page in this folder holds cog blocks that call one function here;
``cog -r -I docs/reference docs/reference/*.md`` rewrites them, and the test
suite runs ``cog --check`` so a change to a command, a tool or a setting that
is not reflected here fails ``make test``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

HELP_WIDTH = "88"


# -- CLI ------------------------------------------------------------------------------


# Runs in a fresh interpreter with rich help switched off: plain text, the same everywhere.
_RENDER_HELP = """
import contextlib, io, json, sys
import typer
from ai_memory.cli.app import app
from ai_memory.cli.options import quiet_flags
command_line = quiet_flags(typer.main.get_command(app))  # as the installed entry builds it
pages = []
for command in json.loads(sys.argv[1]):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        command_line([*command, "--help"], prog_name="ai-memory")
    pages.append(buffer.getvalue())
print(json.dumps(pages))
"""


def cli_help_pages(commands: list[list[str]]) -> list[str]:
    """``ai-memory <command> --help`` for each command, as plain text."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")},
        "TYPER_USE_RICH": "0",
        "COLUMNS": HELP_WIDTH,
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [sys.executable, "-c", _RENDER_HELP, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    pages: list[str] = json.loads(result.stdout)
    return [page.rstrip() for page in pages]


def cli_commands() -> list[str]:
    from typer.main import get_command

    from ai_memory.cli.app import app

    group: Any = get_command(app)
    return list(group.commands)


def cli_reference() -> str:
    names = cli_commands()
    top, *pages = cli_help_pages([[], *([name] for name in names)])
    parts = ["```text", top, "```"]
    for name, page in zip(names, pages, strict=True):
        parts += ["", f"## `ai-memory {name}`", "", "```text", page, "```"]
    return "\n".join(parts) + "\n"


# -- MCP ------------------------------------------------------------------------------


def _schema_type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        kinds = [_schema_type(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds) or "null"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def mcp_reference() -> str:
    from ai_memory.mcp.server import build_server

    tools = asyncio.run(build_server(lambda: None).list_tools())
    parts: list[str] = []
    for tool in sorted(tools, key=lambda t: t.name):
        schema = tool.input_schema
        required = set(schema.get("required", []))
        parts += ["", f"## `{tool.name}`", "", _cell(tool.description or ""), ""]
        hints = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        if hints:
            parts += ["Hints: " + ", ".join(f"`{k}={json.dumps(v)}`" for k, v in hints.items()), ""]
        properties = schema.get("properties", {})
        if not properties:
            parts.append("No arguments.")
            continue
        parts += ["| argument | type | required | default | description |", "|---|---|---|---|---|"]
        for name, prop in properties.items():
            default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
            parts.append(
                f"| `{name}` | {_schema_type(prop)} | {'yes' if name in required else ''} "
                f"| {default} | {_cell(prop.get('description', ''))} |"
            )
    return "\n".join(parts).lstrip("\n") + "\n"


# -- configuration ----------------------------------------------------------------------


def _constraints(field: FieldInfo) -> str:
    bounds = []
    for item in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                bounds.append(f"{sign} {value}")
    return ", ".join(bounds)


def _type_name(field: FieldInfo) -> str:
    annotation = field.annotation
    name = getattr(annotation, "__name__", None)
    text = name if name and not getattr(annotation, "__args__", None) else str(annotation)
    return text.replace("typing.", "")


def config_reference() -> str:
    from ai_memory.config import Config
    from ai_memory.config_render import render_default_config

    parts: list[str] = []
    for section, section_field in Config.model_fields.items():
        model = section_field.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        parts += [
            "",
            f"## `[{section}]`",
            "",
            "| key | type | default | range | environment variable | description |",
            "|---|---|---|---|---|---|",
        ]
        for name, field in model.model_fields.items():
            key = field.alias or name
            env = f"AI_MEMORY_{section.upper()}__{key.upper()}"
            parts.append(
                f"| `{key}` | {_cell(_type_name(field))} | `{json.dumps(field.default)}` "
                f"| {_constraints(field)} | `{env}` | {_cell(field.description or '')} |"
            )
    parts += ["", "## The file `init` writes", "", "```toml", render_default_config().rstrip()]
    parts.append("```")
    return "\n".join(parts).lstrip("\n") + "\n"
