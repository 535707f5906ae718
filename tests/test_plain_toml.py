"""The hook client's plain TOML reader answers as ``tomllib`` does, or hands over to it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ai_memory import locate
from ai_memory.hookclient.plain_toml import strings
from ai_memory.hookclient.resolve import resolve_project

PLAIN = [
    ('project = "shop"\n', ""),
    ("# a marker\nworkspace = 'acme'  # literal\nproject=\"api\"\n", ""),
    ('[server]\n# url = "http://x"\nbind = "127.0.0.1:1"\nurl = "http://127.0.0.1:2"\n', "server"),
    ('[store]\nreaders = 8\nlist = [1, 2]\n[server]\nurl = "http://h:3"\n', "server"),
    ('[ server ]\n\nurl = "http://spaced:4"\r\n', "server"),
]
NOT_PLAIN = [
    ('[server]\nurl = """http://x"""\n', "server"),
    ('[server]\nurl = "http://\\u0078"\n', "server"),
    ('[server]\nmax_request_bytes = 10\nurl = "http://x"\n', "server"),
    ('server.url = "http://dotted"\n', "server"),
    ('server = { url = "http://inline" }\n', "server"),
    ('[llm]\nnested = [\n  [1],\n]\n[server]\nurl = "http://x"\n', "server"),
    ('[[servers]]\nurl = "http://x"\n', "server"),
    ('[server.tls]\nurl = "not this"\n[llm]\nbase_url = "http://llm"\n', "server"),  # a sub-table
    ('project = "a"\nproject = "b"\n', ""),
    ("project = 3\n", ""),
]


@pytest.mark.parametrize(("text", "table"), PLAIN)
def test_plain_files_read_as_tomllib_reads_them(text: str, table: str) -> None:
    parsed = tomllib.loads(text)
    section = parsed.get(table, {}) if table else parsed
    expected = {k: v for k, v in section.items() if isinstance(v, str)}
    assert strings(text, table) == expected


@pytest.mark.parametrize(("text", "table"), NOT_PLAIN)
def test_anything_else_is_left_to_tomllib(text: str, table: str) -> None:
    assert strings(text, table) is None


def test_server_url_and_marker_through_both_readers(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[server]\nurl = "http://127.0.0.1:5"\n')
    assert locate.server_url(None, tmp_path, {}) == "http://127.0.0.1:5"
    (tmp_path / "config.toml").write_text('server.url = "http://127.0.0.1:6"\n')
    assert locate.server_url(None, str(tmp_path), {}) == "http://127.0.0.1:6"
    (tmp_path / "config.toml").write_text("[server\n")
    assert locate.server_url(None, tmp_path, {}) == locate.DEFAULT_URL
    (tmp_path / ".ai-memory.toml").write_text('workspace = "w"\nproject = "p"\n')
    assert (resolve_project(tmp_path).workspace, resolve_project(tmp_path).project) == ("w", "p")
    (tmp_path / ".ai-memory.toml").write_text('project = """multi"""\n')
    assert resolve_project(tmp_path / "sub").project == "multi"
