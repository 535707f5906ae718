"""Rendering a service file from its template, with real paths filled in and escaped."""

from __future__ import annotations

from importlib import resources
from string import Template
from xml.sax.saxutils import escape

from ai_memory.core.errors import InvalidInput
from ai_memory.service.digest import seal
from ai_memory.service.spec import LAUNCHD_LABEL, ServiceSpec

_TEMPLATES = {"linux": "ai-memory.service", "macos": "ai-memory.plist"}


def render(spec: ServiceSpec) -> str:
    """The complete file, digest line included; the same spec always gives the same text."""
    for path in (spec.interpreter, spec.data_dir):
        if any(ch in str(path) for ch in "\n\r\0"):
            raise InvalidInput(f"a service cannot name a path with a line break: {path!r}")
    template = resources.files(__package__).joinpath("templates", _TEMPLATES[spec.platform])
    text = Template(template.read_text(encoding="utf-8"))
    values = _systemd_values(spec) if spec.platform == "linux" else _launchd_values(spec)
    return seal(text.substitute(values, digest=""))


def _systemd_values(spec: ServiceSpec) -> dict[str, str]:
    return {
        "exec_start": " ".join(systemd_quote(arg) for arg in spec.argv),
        "data_dir": _specifiers(str(spec.data_dir)),
        "config_file": _specifiers(str(spec.config_file)),
        "data_dir_comment": str(spec.data_dir),
        "config_file_comment": str(spec.config_file),
    }


def systemd_quote(arg: str) -> str:
    """One ExecStart argument: ``%`` and ``$`` escaped, quoted when it holds blanks or quotes."""
    text = _specifiers(arg).replace("$", "$$")
    if text and not any(ch in text for ch in " \t\"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _specifiers(value: str) -> str:
    return value.replace("%", "%%")


def _launchd_values(spec: ServiceSpec) -> dict[str, str]:
    arguments = "\n".join(f"\t\t<string>{escape(arg)}</string>" for arg in spec.argv)
    return {
        "label": LAUNCHD_LABEL,
        "program_arguments": arguments,
        "data_dir": escape(str(spec.data_dir)),
        "log_file": escape(str(spec.log_file)),
        "data_dir_comment": _comment(str(spec.data_dir)),
        "config_file_comment": _comment(str(spec.config_file)),
    }


def _comment(value: str) -> str:
    """XML comments may not hold ``--``; the path there is for a reader only."""
    text = value
    while "--" in text:
        text = text.replace("--", "-&#45;")
    return text
